/*
 * dc_log — library-internal logging of the DOCA layer, a thin name over base_log.
 *
 * Every layer logs through base_log; the DOCA log library (src/doca/log)
 * plugs in the sink that sends these messages through the SDK log limit, like
 * the vendor's SDK logs, so applications control them with
 * doca_log_level_set_global_sdk_limit(). The DOCA files keep these names.
 */
#ifndef DC_LOG_H_
#define DC_LOG_H_

#include "base_log.h"

enum dc_log_level {
	DC_LOG_CRIT = BASE_LOG_CRIT,
	DC_LOG_ERROR = BASE_LOG_ERROR,
	DC_LOG_WARNING = BASE_LOG_WARNING,
	DC_LOG_INFO = BASE_LOG_INFO,
	DC_LOG_DEBUG = BASE_LOG_DEBUG,
};

#define dc_log(level, func, ...) base_log((level), (func), __VA_ARGS__)

#define DC_ERR(...) BASE_ERR(__VA_ARGS__)
#define DC_WARN(...) BASE_WARN(__VA_ARGS__)
#define DC_INFO(...) BASE_INFO(__VA_ARGS__)
#define DC_DBG(...) BASE_DBG(__VA_ARGS__)

#endif /* DC_LOG_H_ */
