/*
 * bench_args.h
 *	  Command-line parsing shared by the core micro-benchmarks; no other
 *	  dependency, so the fan-out variants of bench_fbrtree, which link none of
 *	  bench_common.o, can use it too.
 */
#ifndef PM_BENCH_ARGS_H
#define PM_BENCH_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * The most keys, boxes or operations a benchmark takes: arrays of them stay
 * far from overflowing a size_t.
 */
#define BENCH_MAX_COUNT		(1L << 40)

/*
 * A count option's value: decimal digits only, within [min, max].  Anything
 * else is false, so a typo is a usage error rather than a run of zero keys.
 */
static inline bool
bench_parse_count(const char *value, long min, long max, long *out)
{
	char	   *end;
	long		v;

	if (value == NULL || *value < '0' || *value > '9')
		return false;
	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/*
 * A comma-separated list of names into selected[i] for names[i]
 * (case-insensitive); false on an unknown name.
 */
static inline bool
bench_parse_list(const char *list, const char *const *names, int nnames, bool *selected)
{
	char	   *copy = strdup(list);
	char	   *save = NULL;
	bool		ok = true;

	memset(selected, 0, nnames * sizeof(bool));
	for (char *item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save))
	{
		int			i = 0;

		while (i < nnames && strcasecmp(item, names[i]) != 0)
			i++;
		if (i == nnames)
			ok = false;
		else
			selected[i] = true;
	}
	free(copy);
	return ok;
}

#endif							/* PM_BENCH_ARGS_H */
