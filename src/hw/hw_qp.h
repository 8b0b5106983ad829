/*
 * hw_qp — a queue pair of the emulated device (RC or UD), in the mlx5 layout,
 * and the engine's doorbell that executes its send queue.
 *
 * The receive ring and the send ring (one buffer, RQ first, as an mlx5
 * driver lays them out, only when the creator gives the rings; otherwise
 * the send ring is the process's own memory, apart from the shareable
 * block, so no other process can rewrite a posted WQE): the RQ is 2^log_rq_size receive WQEs of a fixed
 * stride, each a list of data segments ended early by a segment whose lkey
 * is HW_RQ_INVALID_LKEY; the SQ is 2^log_sq_size 64-byte basic blocks that
 * WQEs (hw_prm.h segments) fill. The doorbell record is two big-endian words:
 * [HW_QP_DBR_RCV] the receive producer counter, [HW_QP_DBR_SND] the send one
 * (low 16 bits each). The device keeps the consumer counters.
 *
 * A QP created on an SRQ (hw_srq.h) has no receive ring: the RQ part of the
 * buffer is empty and its receives come from the SRQ.
 *
 * RC (the default) talks to one connected peer: a QP of the same process, or
 * a view of a shared QP of another process (hw_qp_connect_qpn). UD sends name
 * their destination in each WQE's datagram segment; the device finds it by
 * number (hw_qp_dest_get), in this process or, for a shared QP, in another.
 * A DCI names a DCT in each WQE the same way (hw_dct.h).
 * An XRC initiator is connected as RC is, to an XRC target, and each WQE
 * names the target's SRQ (hw_xrc.h).
 *
 * Sharing: the receive ring, doorbell record and the state a requester
 * works on (struct hw_qp_sh) are one block; with attr.shared it is placed where other
 * processes can map it and published under the QPN (hw_qshare.h).
 *
 * RNR: an RC SEND (or WRITE with immediate) that finds no receive posted
 * waits, as IB's requester does, for the responder's min_rnr_timer and
 * retries up to rnr_retry times (7: forever), then fails with
 * RNR_RETRY_EXC. The doorbell never blocks: the SQ stops at that WQE and
 * records a deadline (hw_qp_deadline). hw_qp_kick resumes it: the WQE runs
 * at once when a receive has arrived, and a kick at or after the deadline
 * counts a retry. Posting a receive (hw_qp_ring_rq, hw_srq_ring) kicks a
 * stalled requester of this process itself, so only the timeout needs a
 * timer-driven kick, which the engine thread gives (hw_eng_thread.h). A
 * requester of another process cannot be run from here (its SQ is its
 * process's memory): its engine thread (after HW_ENG_RNR_GRACE_NS of
 * waiting; a polling program's empty poll takes the receive sooner,
 * hw_qp_deadline) sets rnr_wait in this QP's shared block and sleeps on
 * rnr_bell, which the receive doorbell rings, so it
 * resumes when the receive is posted, not at its next retry (an SRQ's
 * receive posted by a process that owns none of its QPs is still seen at
 * the retry).
 * One thread at a time executes a given SQ: a doorbell or kick that finds
 * the SQ busy leaves its work to the thread running it (lock-free). The engine runs on the caller of
 * hw_qp_ring_sq (docs/ARCHITECTURE.md says why), or on the engine thread for
 * what has no caller; a QP's receive side is consumed by its peer's doorbell.
 */
#ifndef HW_QP_H_
#define HW_QP_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_cq.h"
#include "hw_life.h"
#include "hw_mem.h"
#include "hw_qshare.h"

#define HW_QP_LOG_SQ_MAX 15 /* basic blocks; the 16-bit counter must not alias */
#define HW_QP_LOG_RQ_MAX 15
#define HW_QP_LOG_RQ_STRIDE_MIN 4  /* one data segment */
#define HW_QP_LOG_RQ_STRIDE_MAX 10 /* 64 data segments */
#define HW_RQ_INVALID_LKEY 0x100u  /* ends a receive WQE's list early */
#define HW_QP_COUNTER_MASK 0xffffu

enum {
	HW_QP_DBR_RCV = 0,
	HW_QP_DBR_SND = 1,
};

enum hw_qp_state {
	HW_QP_RESET,
	HW_QP_INIT,
	HW_QP_RTR, /* receives: the responder side works */
	HW_QP_RTS, /* sends too */
	HW_QP_ERR,
};

enum hw_qp_type {
	HW_QPT_RC = 0,
	HW_QPT_UD,
	HW_QPT_DCI, /* DC initiator: each WQE names its DCT (hw_dct.h) */
	HW_QPT_DCT, /* DC target: a responder only, on an SRQ, found by number */
	HW_QPT_UC,  /* unreliable connected: no READ or atomics, nothing acknowledged */
	HW_QPT_XRC_INI, /* XRC initiator: an RC requester whose WQEs name the target's SRQ (hw_xrc.h) */
	HW_QPT_XRC_TGT, /* XRC target: a responder of an XRC domain, with no queues of its own */
};

#define HW_QP_RNR_RETRY_INFINITE 7
#define HW_QP_RNR_TIMER_MAX 31
#define HW_QP_NO_DEADLINE UINT64_MAX
#define HW_UD_MTU 4096 /* the port MTU: the largest UD message */
#define HW_UD_MTU_ROCE 1024 /* a RoCE port's active MTU (1500-byte Ethernet frames): the largest datagram to another machine */
/*
 * The port's max_msg_sz, as mlx5 reports it: a longer message fails on the
 * requester with LOCAL_LENGTH_ERR before a byte moves.
 */
#define HW_QP_MAX_MSG (1u << 30)

struct hw_srq;
typedef void (*hw_qp_err_fn)(void *arg);

struct hw_qp_attr {
	uint32_t qpn; /* low 24 bits; reported in CQEs */
	enum hw_qp_type type;	/* 0: RC */
	struct hw_pd *pd;
	struct hw_cq *send_cq;
	struct hw_cq *recv_cq;
	uint32_t log_sq_size;	/* basic blocks, 0 .. HW_QP_LOG_SQ_MAX */
	uint32_t log_rq_size;	/* receive WQEs, 0 .. HW_QP_LOG_RQ_MAX */
	uint32_t log_rq_stride; /* bytes of one receive WQE, MIN .. MAX */
	struct hw_srq *srq;	/* receives come from here; log_rq_* are then ignored */
	uint32_t qkey;		/* UD */
	/*
	 * RNR, as IB's QP attributes: min_rnr_timer (responder, the IB timer
	 * code 0..31, 0 meaning 655.36 ms) and rnr_retry (requester, 0..7).
	 * Zero-initialised attributes give no retries: the error comes at once.
	 */
	uint8_t min_rnr_timer;
	uint8_t rnr_retry;
	uint16_t lid;		/* the port's LID: slid of what this QP sends over UD */
	uint8_t gid[16];	/* the port's GID 0: the source GID of the GRHs it sends */
	bool roce;		/* an Ethernet port: every address carries a GRH, the AV's GRH bit clear (hw_gid.h) */
	uint64_t dc_key;	/* DCT: the access key a DCI's WQE must carry */
	/*
	 * The user index its send completions carry (srqn_uidx, CQE version 1),
	 * as a QP made by a DevX command names it; 0 otherwise.
	 */
	uint32_t user_index;
	/*
	 * XRC_TGT: its domain (non-zero), and it has no PD, CQs or receive
	 * ring; XRC_INI: no receive CQ or ring (hw_xrc.h).
	 */
	uint64_t xrcd;
	/*
	 * Reachable from the other processes of the device: the QP's block is
	 * placed in shared memory and published under qpn, so a QP elsewhere
	 * connects to it by number (hw_qp_connect_qpn) and UD sends reach it.
	 * The QPN must then be one this process holds (hw_id_alloc).
	 */
	bool shared;
	/*
	 * Rings the creator gives (NULL: the QP allocates them), as a FlexIO
	 * program places a QP's in device memory: ring holds the RQ at 0 and the
	 * SQ after it (at 1 << (log_rq_size + log_rq_stride), as mlx5 lays them
	 * out), HW_QP_RING_ALIGN aligned; dbrec the two big-endian words of the
	 * doorbell record (HW_QP_DBR_RCV, HW_QP_DBR_SND), 8-byte aligned. Both or
	 * neither. They stay the creator's, to initialise and to keep until the
	 * QP is destroyed. With shared, the receive ring and the record are
	 * published with the QP's state (hw_qblock_adopt), so peers reach the
	 * creator's memory (HW_ERR_NOTSUP when they could not); the send ring
	 * is never shared, so a creator that keeps it on pages of its own (sq)
	 * keeps it from other processes.
	 */
	void *ring;
	uint32_t *dbrec;
	void *sq; /* with ring: the send ring elsewhere than at its offset in ring (NULL: there) */
};

#define HW_QP_DBREC_BYTES 8 /* a given record: its two words */

#define HW_QP_RING_ALIGN 64 /* a given ring: each send WQE basic block in one cache line */

/*
 * The device's state of a QP that a requester works on: at the end of the
 * QP's block (after the rings and the doorbell record), so a requester of
 * another process that mapped the block consumes its receives and moves it
 * to ERR as one of this process does.
 */
struct hw_qp_sh {
	uint32_t magic;
	uint32_t qpn;
	uint32_t type;	    /* enum hw_qp_type */
	uint32_t pd_id;
	uint32_t recv_cqn;
	uint32_t srqn;
	uint32_t has_srq;
	uint32_t log_sq_size;
	uint32_t log_rq_size;
	uint32_t log_rq_stride;
	uint32_t state;	    /* enum hw_qp_state */
	uint32_t qkey;	    /* UD */
	uint32_t min_rnr_timer;
	uint32_t lid;	    /* the port: a DC address must name it (DCT) */
	uint64_t dc_key;    /* DCT */
	uint8_t gid[16];
	uint32_t roce;	    /* an Ethernet port: a DC address names it by any GID of its table */
	uint32_t life_idx;  /* the owner's entry of the life table (hw_life.h), HW_LIFE_NONE: not watched so */
	uint32_t life_tid;  /* its holder thread: the word reads this while the owner lives */
	/*
	 * The remote operations this QP takes as a responder (HW_ACCESS_REMOTE_*,
	 * IB's QP access flags): an atomic without HW_ACCESS_REMOTE_ATOMIC here
	 * is an invalid request, whatever the key allows.
	 */
	uint32_t rights;
	/*
	 * A requester of another process waits on RNR for a receive here: the
	 * receive doorbell that finds rnr_wait set clears it and rings rnr_bell
	 * (a shared futex word) for the requester's engine thread
	 * (hw_qp_resume_peer); where nobody waits the doorbell pays one load.
	 */
	uint32_t rnr_wait;
	uint32_t rnr_bell;
	uint64_t xrcd;	    /* XRC_TGT: its domain (hw_xrc.h) */
	uint32_t dc_key_violations; /* DCT: requests that named it with another key (QUERY_DCT reports them) */
	/*
	 * Responder scatter to CQE (the QP context's cs_res): a SEND of at most
	 * this many bytes (32 into a 64-byte CQE, 64 into a 128-byte one) is
	 * written into its receive CQE instead of the receive buffer; 0: off.
	 */
	uint32_t scat_max;
	/*
	 * Next receive WQE a responder consumes (16-bit counter), moved by CAS.
	 * A requester of another process moves it at every SEND: on a line of
	 * its own, the words the owner reads at every receive it posts (state,
	 * rnr_wait) stay in its cache.
	 */
	uint32_t rq_ci __attribute__((aligned(64)));
} __attribute__((aligned(64)));

#define HW_QP_NO_FAST_SIG 1u  /* signature pipelining */
#define HW_QP_NO_FAST_PACE 2u /* paced (hw_pace.h) */

struct hw_qview;

/* The engine's view; nothing outside src/hw touches it. */
struct hw_tm_fins;

struct hw_qp {
	uint32_t qpn;
	uint32_t pd_id;
	/*
	 * The domain a peer's rkeys of RDMA WRITEs (READs) to this QP are
	 * checked against: pd_id, or HW_QP_NO_PD when its rights refuse the
	 * operation (HW_QP_RIGHTS_STRICT), so the key check itself refuses it
	 * with the remote access error and the engine pays no test of its own.
	 */
	uint32_t wr_pd;
	uint32_t rd_pd;
	struct hw_cq *send_cq;
	struct hw_cq *recv_cq;
	uint8_t *buf;	  /* RQ at 0 (given rings: SQ at sq_off) */
	uint8_t *sq;	  /* the send ring: private memory, never in the shared block (NULL in a view) */
	void *sq_own;	  /* the send ring when this QP allocated it */
	size_t buf_len;
	size_t sq_off;
	uint32_t *dbrec;
	struct hw_qp_sh *sh; /* state, rq_ci, qkey, min_rnr_timer: see struct hw_qp_sh */
	uint32_t log_sq_size;
	uint32_t log_rq_size;
	uint32_t log_rq_stride;
	uint32_t sq_ci;	  /* next basic block the engine reads (16-bit counter) */
	struct hw_qp *peer;
	enum hw_qp_type type;
	struct hw_srq *srq;
	struct hw_qp *srq_next;	 /* the SRQ's list of QPs */
	uint8_t rnr_retry;
	uint8_t dc_rnr_timer;	 /* DCI: the min_rnr_timer of the DCT that last answered RNR */
	uint16_t lid;
	uint8_t gid[16];
	bool roce;		 /* hw_qp_attr.roce */
	uint32_t uidx;		 /* hw_qp_attr.user_index: the send CQEs' srqn_uidx */
	hw_qp_err_fn err_fn;	 /* the owner's word of entering ERR (hw_qp_on_err), NULL in a view */
	void *err_arg;
	uint32_t err_told;	 /* this ERR was told already (until a reset) */
	bool sig_pipe;		 /* signature pipelining (hw_sig_pipe.c): a signature error stops the SQ */
	/*
	 * Why the first look (eng_fast_pass) leaves this SQ to the general path,
	 * one bit a reason: its one test for all of them.
	 */
	uint8_t no_fast;
	uint32_t sq_pi;		 /* the last rung producer counter */
	uint32_t drivers;	 /* threads that asked to run the SQ; the first one runs it */
	uint8_t rnr_left;	 /* retries left for the stalled WQE */
	/*
	 * Transport retries (hw_qp_set_retry): with retransmit set, a request
	 * no peer answered yet is sent again every 4.096 us << ack_timeout
	 * (0: forever), retry_cnt times, before TRANSPORT_RETRY_EXC.
	 */
	bool retransmit;
	uint8_t ack_timeout;
	uint8_t retry_cnt;
	bool retry_wait; /* the wait at rnr_deadline is such a retry, not an RNR wait: no receive ends it */
	uint64_t rnr_deadline;	 /* HW_QP_NO_DEADLINE unless the SQ waits on RNR */
	uint64_t kick_ns;	 /* the latest kick's clock, for the thread running the SQ */
	struct hw_qblock qb;	 /* rings, record and hw_qp_sh */
	bool published;		 /* the block's record is under qpn */
	bool polled;		 /* the engine thread watches the send record (hw_qp_set_polled) */
	bool timers_by_caller;	 /* RNR deadlines are the caller's to kick (hw_qp_set_caller_timers) */
	uint32_t sig_held;	 /* sig_pipe: the SQ stopped (drained) after a signature error */
	void (*sig_drained)(void *arg); /* sig_pipe: told when the SQ stops so */
	void *sig_drained_arg;
	uint32_t seen_rq_pi;	 /* a polled QP: the receive counter the engine thread last saw */
	uint32_t trap_sq_pi;	 /* a polled QP: sq_pi at the last doorbell trap's look (hw_qp_polled_run) */
	struct hw_qview *view;	 /* non-NULL: another process's QP mapped here (a peer) */
	struct hw_qp *peer_view; /* the view of another process's QP this one connected to (ours to free) */
	uint32_t xm_machine;	 /* non-zero: the RC peer is QP xm_dest of that machine (hw_xm.h) */
	uint32_t xm_dest;
	uint8_t xm_gid[16];	 /* with xm_machine: the GID the peer was addressed by (its port there) */
	struct hw_xm_flight *xf; /* with xm_machine: the requests in flight (hw_engine.c) */
	uint64_t xm_probed_ns;	 /* the engine thread's last look at that peer */
	uint32_t xm_inflight;	 /* requests of xf in flight, as the last drive left them */
	/*
	 * A QP of this process: the state its owner last set, which the shared
	 * word (sh->state) must still say; state_seq is odd while a change
	 * writes both (hw_qp_state_of).
	 */
	uint32_t state;
	uint32_t state_seq;
	uint32_t reg_live; /* its place in the registry's packed list (hw_qp.c) */
	uint32_t rnr_asks;    /* hw_qp_deadline calls while waiting on RNR: the program polls */
	/* The engine thread's watch of an RNR wait across processes (hw_qp.c, pass_rnr_remote). */
	uint32_t rnr_seen_asks;
	uint64_t rnr_seen_dl;
	uint64_t rnr_look_ns;
	uint64_t rnr_gap_ns;
	/* The receive doorbell's last counter and rq_ci as it last read it: a post within both needs no read of rq_ci. */
	uint32_t rq_pi_rung;
	uint32_t rq_ci_seen;
	/* Rendezvous FINs owed to this QP's receive queue, which had no receive (hw_eng_tm.h); NULL: none ever. */
	struct hw_tm_fins *tm_fins; /* __atomic builtins */
	uint32_t tm_fins_owed; /* __atomic builtins */
	/* A DCI with streams (hw_dcs.h): the logs it was given and the channels in error, one bit each. */
	bool dcs;
	uint8_t dcs_log_conc;
	uint8_t dcs_log_err;
	uint32_t dcs_errored;
	/* A paced QP (hw_pace.h): its bucket, and until when its next WQE waits for tokens. */
	struct hw_pace *pace;
	uint64_t pace_deadline;
};

/*
 * HW_ERR_INVAL on a missing PD or CQ, a size or RNR attribute out of range or
 * an unknown type; HW_ERR_NOMEM, also when the registry already holds 4096
 * QPs of this process; a shared QP: HW_ERR_KEY or HW_ERR_ACCESS when this
 * process does not hold the QPN. State RESET; the QP is found by
 * hw_qp_lookup until destroyed.
 */
enum hw_status hw_qp_create(const struct hw_qp_attr *attr, struct hw_qp **out);
/* A shared QP withdraws its record first (peers elsewhere see it gone); the caller frees the QPN. */
void hw_qp_destroy(struct hw_qp *qp);
/*
 * The owner's word when its QP enters ERR, once until the QP is reset:
 * from a modify to ERR on the caller's thread, or from the engine thread
 * when a WQE's error moves it there (never after hw_qp_destroy returned).
 * A QP moved to ERR by a process of its peer's is not told here.
 */
void hw_qp_on_err(struct hw_qp *qp, hw_qp_err_fn fn, void *arg);

uint8_t *hw_qp_sq_buf(const struct hw_qp *qp);
uint8_t *hw_qp_rq_buf(const struct hw_qp *qp);
uint32_t *hw_qp_dbrec(const struct hw_qp *qp);
/* hw_qp_state_of; a QP of this process found in ERR so is settled there (RQ flushed, the word ERR). */
enum hw_qp_state hw_qp_state(struct hw_qp *qp);

/*
 * Moves the state: RESET->INIT->RTR->RTS one step at a time, any state to ERR
 * or RESET (RESET empties both rings' counters). HW_ERR_INVAL otherwise,
 * nothing changed. Entering ERR flushes the posted receives.
 */
enum hw_status hw_qp_modify(struct hw_qp *qp, enum hw_qp_state to);

/* Connects qp to peer (one direction; call it for both). NULL disconnects. */
void hw_qp_connect(struct hw_qp *qp, struct hw_qp *peer);

/*
 * Connects an RC qp to the QP numbered dest_qpn, in this process or (when
 * that QP is shared) in another one of the device, as a modify to RTR with
 * dest_qp_num does. HW_ERR_KEY when no such QP is reachable, HW_ERR_INVAL
 * for a UD qp.
 *
 * A peer of another process is a view of its block: its receives, its recv
 * CQ and SRQ, mapped here. It is checked at every WQE (one load of its
 * record's sequence): destroyed, it answers nothing and the WQE fails with
 * TRANSPORT_RETRY_EXC; its owner's death is found by the engine thread
 * within about 100 ms and moves qp to ERR (receives and sends flushed).
 */
enum hw_status hw_qp_connect_qpn(struct hw_qp *qp, uint32_t dest_qpn);

/*
 * hw_qp_connect_qpn to a QP of the port standing for lid only (HW_ERR_KEY
 * when the QP of that number is on another port); a QP created with no
 * port (lid 0: a FlexIO queue) is reached from any.
 */
enum hw_status hw_qp_connect_port(struct hw_qp *qp, uint32_t dest_qpn, uint16_t lid);

/*
 * A program that writes WQEs, the send record and the doorbell register
 * itself (mlx5dv) never calls hw_qp_ring_sq: with polled set, the engine
 * thread watches the send record and runs the SQ when its counter moves,
 * and resumes a requester waiting on RNR when the receive record moves.
 * Latency: the thread spins while raw doorbells come and then sleeps up to
 * HW_ENG_POLL_MAX_NS between looks, HW_ENG_POLL_IDLE_MAX_NS once none came
 * for HW_ENG_QUIET_NS (hw_eng_raw.h), so the first WQE after a quiet spell
 * may wait that long — unless the doorbell register's page is trapped
 * (hw_trap.h), when the write to it runs the SQ on the writer's thread and
 * this watch is the fallback. HW_ERR_INVAL when qp is NULL.
 */
enum hw_status hw_qp_set_polled(struct hw_qp *qp, bool polled);

/*
 * Signature pipelining (hw_sig_pipe.c, MLX5DV_QP_CREATE_SIG_PIPELINING): a
 * WQE whose transfer fails a signature check completes, then the SQ stops
 * before the next one (SQ drained) and drained(arg) is called; what is
 * posted meanwhile waits until hw_qp_sig_release. Set before the QP runs.
 */
void hw_qp_set_sig_pipelining(struct hw_qp *qp, void (*drained)(void *arg), void *arg);
bool hw_qp_sig_held(const struct hw_qp *qp);
void hw_qp_sig_hold(struct hw_qp *qp);
/* Resumes a stopped SQ: false when it was not stopped. */
bool hw_qp_sig_release(struct hw_qp *qp);
/* Lifts the stop without running the SQ (the QP goes to ERR or RESET). */
void hw_qp_sig_clear(struct hw_qp *qp);
/* The SQ's next basic block to run (16-bit counter): where a stopped SQ stands. */
uint32_t hw_qp_sq_next(const struct hw_qp *qp);

/*
 * RNR deadlines of qp are kicked by the caller with its own clock
 * (hw_qp_kick), not by the engine thread; a receive posted meanwhile still
 * resumes the SQ, in this process or another. HW_ERR_INVAL when qp is NULL.
 */
enum hw_status hw_qp_set_caller_timers(struct hw_qp *qp, bool caller);

/*
 * A view of the shared QP numbered qpn of another process (or this one): its
 * block, recv CQ and SRQ mapped here, for the engine as a peer. HW_ERR_KEY
 * when none is reachable, HW_ERR_LAYOUT when its block is not a QP's.
 */
enum hw_status hw_qp_attach_num(uint32_t qpn, struct hw_qp **out);
/* Drops a view (unmaps it); nothing for NULL. */
void hw_qp_detach(struct hw_qp *view);
/* What a view keeps beside the mapped QP: the record it came from and the views it made. */
struct hw_qview {
	const _Atomic uint32_t *seqp;
	uint32_t seq;
	uint32_t gone; /* its owner was found dead */
	uint32_t refs; /* the UD destination cache's count */
	const _Atomic int *lifep; /* the owner's life word (hw_life.h); NULL: only the engine thread's look */
	uint32_t life_tid;
};

/*
 * A view is usable while its QP's record is unchanged and its owner lives
 * (inline: every WQE asks, so no request succeeds once the owner is dead).
 */
static inline bool hw_qp_view_live(const struct hw_qp *v)
{
	const struct hw_qview *w = v->view;

	return w == NULL ||
	       (__atomic_load_n(&w->gone, __ATOMIC_ACQUIRE) == 0 &&
		atomic_load_explicit(w->seqp, memory_order_acquire) == w->seq &&
		(w->lifep == NULL || hw_life_alive(w->lifep, w->life_tid)));
}

/*
 * The send doorbell: new_pi is the send producer counter (basic blocks, low
 * 16 bits) the program wrote to the record. Executes every WQE up to it
 * before returning, writing CQEs as the card would; work errors are reported
 * only in CQEs. HW_ERR_INVAL (nothing executed) when the QP is not in RTS or
 * ERR, or when new_pi is more than a ring ahead of the consumer.
 */
enum hw_status hw_qp_ring_sq(struct hw_qp *qp, uint32_t new_pi);

/*
 * Sets the RNR attributes (as a modify with IBV_QP_MIN_RNR_TIMER /
 * IBV_QP_RNR_RETRY does). HW_ERR_INVAL when out of range, nothing changed.
 */
enum hw_status hw_qp_set_rnr(struct hw_qp *qp, uint8_t min_rnr_timer, uint8_t rnr_retry);
/*
 * Sets the requester's transport retries (as a modify with IBV_QP_TIMEOUT /
 * IBV_QP_RETRY_CNT does): a request to a peer that exists but has not
 * reached RTR (RESET or INIT) drops as a card's does and is sent again
 * every 4.096 us << ack_timeout (0: forever) up to retry_cnt times, then
 * fails with TRANSPORT_RETRY_EXC. Until set, it fails at once. A peer gone
 * fails at once either way. HW_ERR_INVAL when out of range (ack_timeout
 * 0..31, retry_cnt 0..7), nothing changed.
 */
enum hw_status hw_qp_set_retry(struct hw_qp *qp, uint8_t ack_timeout, uint8_t retry_cnt);
/*
 * Responder scatter to CQE on or off (hw_qp_sh.scat_max): on, SENDs this
 * QP receives of at most 32 bytes (its receive CQ's CQEs 64 bytes) or 64
 * (128-byte CQEs) land in the CQE, its op_own marked HW_CQE_INLINE_SCATTER_32
 * or _64, as the card's. HW_ERR_INVAL for a QP without a receive CQ.
 */
enum hw_status hw_qp_set_scatter(struct hw_qp *qp, bool on);

/*
 * Sets the remote operations the QP takes as a responder (HW_ACCESS_REMOTE_*
 * bits; others HW_ERR_INVAL), as a modify with IBV_QP_ACCESS_FLAGS does. A
 * new QP takes all of them: one made below verbs (FlexIO's, the fabric's)
 * is limited by its keys alone.
 */
enum hw_status hw_qp_set_rights(struct hw_qp *qp, uint32_t rights);

#define HW_QP_RIGHTS_ALL (HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC)
/*
 * With this bit the responder's rights gate RDMA reads and writes too (a
 * remote access error, before any key is looked at), as a card's QP access
 * flags do. Without it (verbs QPs) only atomics are gated, reads and writes
 * being limited by their keys alone. DOCA RDMA contexts set it: their
 * permissions are their QP's.
 */
#define HW_QP_RIGHTS_STRICT (1u << 31)

#define HW_QP_NO_PD UINT32_MAX /* wr_pd / rd_pd of a QP refusing the operation: no key is of it */

/* Whether a responder with these rights refuses an RDMA read or write (right: HW_ACCESS_REMOTE_READ or _WRITE). */
static inline bool hw_qp_rights_refuse(uint32_t rights, uint32_t right)
{
	return (rights & (HW_QP_RIGHTS_STRICT | right)) == HW_QP_RIGHTS_STRICT;
}

/* wr_pd and rd_pd of a QP of domain pd_id with these rights. */
static inline void hw_qp_rights_pds(struct hw_qp *qp, uint32_t rights)
{
	qp->wr_pd = hw_qp_rights_refuse(rights, HW_ACCESS_REMOTE_WRITE) ? HW_QP_NO_PD : qp->pd_id;
	qp->rd_pd = hw_qp_rights_refuse(rights, HW_ACCESS_REMOTE_READ) ? HW_QP_NO_PD : qp->pd_id;
}

/* Sets a UD QP's qkey. HW_ERR_INVAL for an RC QP. */
enum hw_status hw_qp_set_qkey(struct hw_qp *qp, uint32_t qkey);

/* The IB RNR timer code's time in ns (0 is the longest, 655.36 ms). */
uint64_t hw_rnr_timer_ns(uint8_t code);

/* The QP of this process with this number (low 24 bits), or NULL. */
struct hw_qp *hw_qp_lookup(uint32_t qpn);

/*
 * The UD destination qpn: a QP of this process, or a view of a shared one of
 * another process (cached, counted: give it back with hw_qp_dest_put).
 * NULL when none is reachable.
 */
struct hw_qp *hw_qp_dest_get(uint32_t qpn);
void hw_qp_dest_put(struct hw_qp *qp);
/* Internal: at exit, after the engine thread stopped, the cached views go. */
void hw_qp_dests_drop(void);

enum hw_qp_state hw_qp_state_torn(const struct hw_qp *qp);

/*
 * The QP's state as a requester sees it (any thread). The shared word is
 * memory other processes of the user can write: a peer moves it to ERR,
 * and a scribbler to anything. So for a QP of this process, a word that
 * no longer says what the owner set reads ERR (hw_qp_state settles it),
 * never a state in which the doorbell would leave posted work waiting.
 */
static inline enum hw_qp_state hw_qp_state_of(const struct hw_qp *qp)
{
	uint32_t sh = __atomic_load_n(&qp->sh->state, __ATOMIC_ACQUIRE);

	if (qp->view != NULL)
		return sh <= HW_QP_ERR ? (enum hw_qp_state)sh : HW_QP_ERR;
	if (__builtin_expect(sh == __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE), 1))
		return (enum hw_qp_state)sh;
	return hw_qp_state_torn(qp);
}

/*
 * hw_qp_state inline for the doorbells: the call is made only when the
 * state needs settling (a word another process overwrote).
 */
static inline enum hw_qp_state hw_qp_state_now(struct hw_qp *qp)
{
	enum hw_qp_state st = hw_qp_state_of(qp);

	if (__builtin_expect(st == HW_QP_ERR, 0))
		return hw_qp_state(qp);
	return st;
}

/*
 * The receive doorbell: records the producer counter (writes it to the
 * record) and resumes the peer if its SQ waits for a receive here. On a QP
 * in ERR (or found there) what is posted is flushed at once, as on a card.
 * HW_ERR_INVAL for a QP on an SRQ or a counter more than a ring ahead.
 */
enum hw_status hw_qp_ring_rq(struct hw_qp *qp, uint32_t pi);

/*
 * Internal: delivers the rendezvous FINs owed to qp into the receives now
 * posted (hw_eng_tm.h; the engine thread's pass, at least every
 * HW_ENG_TM_FIN_RETRY_NS while some are owed); frees them at destroy.
 */
#define HW_ENG_TM_FIN_RETRY_NS 50000ull
void hw_eng_tm_fins_run(struct hw_qp *qp);
void hw_eng_tm_fins_free(struct hw_qp *qp);

/*
 * Resumes an SQ stopped by RNR: its WQE runs if a receive arrived; when
 * now_ns (CLOCK_MONOTONIC ns, or a caller's clock that agrees with
 * hw_qp_deadline) is at or past the deadline, a retry is counted and the
 * error comes when none is left (now_ns 0 counts no time). HW_ERR_INVAL when
 * qp is NULL.
 */
enum hw_status hw_qp_kick(struct hw_qp *qp, uint64_t now_ns);

/*
 * When the next kick is due (an RNR retry, or the tokens a paced SQ waits
 * for: hw_pace.h), HW_QP_NO_DEADLINE when the SQ waits for nothing; 0 (due
 * now) when the RC responder of another process it waits on RNR for
 * has receives posted since for the WQEs waiting (up to 32, or its whole
 * ring): the kick runs them.
 */
uint64_t hw_qp_deadline(struct hw_qp *qp);

/*
 * Internal, with cq's producer lock held: a receive taken by a producer that
 * died before its CQE (hw_cq_claim_orphan) is given back to its RQ, or
 * completed in error on an SRQ.
 */
void hw_qp_claim_recover(struct hw_cq *cq);

/* Internal to the device: to ERR, posted receives completed with WR_FLUSH. */
void hw_qp_set_err(struct hw_qp *qp);

/*
 * Internal: the WQE at the SQ's consumer counter completes LOCAL_QP_OP_ERR
 * and the QP goes to ERR (a send record no program could have written).
 */
void hw_qp_fail_sq(struct hw_qp *qp);

/* Internal: runs the SQ up to the rung counter (now_ns 0: no time passed). */
void hw_qp_drive(struct hw_qp *qp, uint64_t now_ns);

/* Internal: resumes qp's peer if it waits on RNR for qp's receives. */
void hw_qp_resume_peer(struct hw_qp *qp);

/* Internal to the engine thread: one look at every QP of this process (hw_eng_thread.h). */
#define HW_ENG_BELLS_MAX 64
struct hw_eng_pass {
	uint64_t now_ns;
	bool check_peers;	/* look whether remote peers still live (every ~100 ms) */
	bool activity;		/* out: something ran */
	bool polled;		/* out: a polled QP exists */
	bool raw;		/* out: a polled QP's record had moved: a raw doorbell ran */
	bool no_polled_run;	/* in: polled QPs' records are not looked at (SOFTDPU_ENGINE_RAW_POLL=0) */
	bool polled_trapped;	/* in: traps serve raw doorbells: what a look finds is no activity to spin for */
	bool xm;		/* out: a QP waits for answers of another machine */
	uint64_t next_deadline; /* out: the nearest RNR deadline not yet due */
	/*
	 * out: the rnr_bell words (with the value seen before looking) of the
	 * responders of other processes that SQs wait on RNR for; bells_over
	 * when there were more than HW_ENG_BELLS_MAX.
	 */
	uint32_t nbells;
	bool bells_over;
	uint32_t *bell[HW_ENG_BELLS_MAX];
	uint32_t bell_seen[HW_ENG_BELLS_MAX];
};
void hw_qp_engine_pass(struct hw_eng_pass *p);
/*
 * Internal to a doorbell page's trap (hw_trap.h): every polled QP's SQ run
 * up to its record, and a waiting requester resumed by its receive record,
 * on the calling thread. Returns the largest backlog of a QP whose SQ moved
 * since the last call: its send CQ's CQEs not consumed (hw_cq_backlog) and
 * the basic blocks rung and not run yet (the engine thread's look may be
 * running them): work of earlier doorbells the program has not looked at
 * tells a stream from a ping-pong (hw_trap.h).
 */
uint32_t hw_qp_polled_run(void);
/* Internal: the registry's lock, held across fork by the engine thread's handlers. */
void hw_qp_reg_lock(void);
void hw_qp_reg_unlock(void);
/*
 * Internal, in a forked child (lock held): the QPs in the registry are the
 * parent's. Forgotten, their numbers resolve here as any other process's
 * (a view checked against its record and its owner's life), and the
 * child's engine thread runs none of them.
 */
void hw_qp_reg_forget(void);

#endif /* HW_QP_H_ */
