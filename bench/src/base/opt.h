#ifndef BASE_OPT_H
#define BASE_OPT_H

/*
 * Typed, range-checked command-line options described by one table, the
 * same table that prints the options section of --help, so the help text
 * cannot drift from what is parsed.
 *
 *   struct ropts { const char *format; int png; };
 *   static const struct opt ropts[] = {
 *     OPT_C("format", 'f', struct ropts, format, "F", "md|csv|json",
 *           "the output format"),
 *     OPT_F("png", 0, struct ropts, png, "also write PNG files"),
 *     OPT_END
 *   };
 *
 * Accepted forms: --name VALUE, --name=VALUE, -x VALUE, -xVALUE; options
 * and arguments may be mixed; "--" ends the options. A scalar option
 * given twice is an error (a list option collects every value).
 */

#include <stddef.h>   /* offsetof, for the table rows */

struct buf;

enum opt_type {
	OPT_END_ = 0,
	OPT_FLAG,      /* int: set to 1 */
	OPT_STR,       /* const char *: the argument (borrowed from argv) */
	OPT_INT,       /* long: a whole number in [min, max] */
	OPT_DOUBLE,    /* double: a finite number in [min, max] */
	OPT_LIST,      /* struct opt_list: every value, in order */
	OPT_CHOICE,    /* const char *: one of the '|'-separated choices */
};

struct opt {
	const char *name;       /* long name, without "--" */
	char short_name;        /* 0 for none */
	enum opt_type type;
	size_t offset;          /* offsetof(the command's options struct, member) */
	const char *arg;        /* argument name in help ("DIR"); NULL for flags */
	const char *help;       /* text for --help (wrapped when printed) */
	double min, max;        /* OPT_INT / OPT_DOUBLE range when min < max */
	const char *choices;    /* OPT_CHOICE: "md|csv|json" */
};
#define OPT_END { NULL, 0, OPT_END_, 0, NULL, NULL, 0, 0, NULL }

/*
 * Table rows: OPT_F flag, OPT_S string, OPT_C choice, OPT_I whole number,
 * OPT_D number, OPT_L list; LONG, SHORT (0 for none), the options struct
 * type ST and its member M, the argument's name in help, the help text.
 */
#define OPT_F(LONG, SHORT, ST, M, HELP) \
	{ LONG, SHORT, OPT_FLAG, offsetof(ST, M), NULL, HELP, 0, 0, NULL }
#define OPT_S(LONG, SHORT, ST, M, ARG, HELP) \
	{ LONG, SHORT, OPT_STR, offsetof(ST, M), ARG, HELP, 0, 0, NULL }
#define OPT_C(LONG, SHORT, ST, M, ARG, CHOICES, HELP) \
	{ LONG, SHORT, OPT_CHOICE, offsetof(ST, M), ARG, HELP, 0, 0, CHOICES }
#define OPT_I(LONG, SHORT, ST, M, ARG, MIN, MAX, HELP) \
	{ LONG, SHORT, OPT_INT, offsetof(ST, M), ARG, HELP, MIN, MAX, NULL }
#define OPT_D(LONG, SHORT, ST, M, ARG, MIN, MAX, HELP) \
	{ LONG, SHORT, OPT_DOUBLE, offsetof(ST, M), ARG, HELP, MIN, MAX, NULL }
#define OPT_L(LONG, SHORT, ST, M, ARG, HELP) \
	{ LONG, SHORT, OPT_LIST, offsetof(ST, M), ARG, HELP, 0, 0, NULL }

/* The values of an OPT_LIST (borrowed from argv); free v with free(). */
struct opt_list {
	const char **v;
	size_t n;
};

/*
 * Parses argv[1..argc) (argv[0] is the command's name) into dst by the
 * table. The arguments that are not options are collected, in order, into
 * *args (free() it; its strings are argv's) and their count into *nargs.
 * Returns 0; 1 when -h/--help was given (nothing else is checked); -1 after
 * error() naming the option and what was wrong.
 */
int opt_parse(const struct opt *opts, int argc, char **argv, void *dst,
	      const char ***args, size_t *nargs);
/* Frees the vectors of the OPT_LIST members of dst. */
void opt_release(const struct opt *opts, void *dst);

/* Appends the options section of --help (one entry per option, wrapped). */
void opt_help(const struct opt *opts, struct buf *out);

#endif
