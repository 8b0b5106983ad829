/*
 * dc_log — library-internal logging (implemented with doca_log in src/doca/log).
 *
 * Library messages go through the SDK log limit, like the vendor's SDK logs,
 * so applications control them with doca_log_level_set_global_sdk_limit().
 */
#ifndef DC_LOG_H_
#define DC_LOG_H_

enum dc_log_level {
	DC_LOG_CRIT = 20,
	DC_LOG_ERROR = 30,
	DC_LOG_WARNING = 40,
	DC_LOG_INFO = 50,
	DC_LOG_DEBUG = 60,
};

void dc_log(int level, const char *func, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define DC_ERR(...) dc_log(DC_LOG_ERROR, __func__, __VA_ARGS__)
#define DC_WARN(...) dc_log(DC_LOG_WARNING, __func__, __VA_ARGS__)
#define DC_INFO(...) dc_log(DC_LOG_INFO, __func__, __VA_ARGS__)
#define DC_DBG(...) dc_log(DC_LOG_DEBUG, __func__, __VA_ARGS__)

#endif /* DC_LOG_H_ */
