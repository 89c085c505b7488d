#ifndef CMD_H
#define CMD_H

/*
 * The subcommand interface. To add a command: write cmd-NAME.c with
 * cmd_NAME(), declare it below, add one row to the table in main.c and
 * one object line to the Makefile.
 *
 * A command returns its exit code (util.h EXIT_*). It prints its results;
 * libraries only report errors.
 */

struct cmd_ctx {
	const char *db_path;  /* --db, $SHIMBENCH_DB, or ./shimbench.db */
	int quiet;            /* --quiet: results only, no progress */
};

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct cmd_ctx *ctx);
	const char *summary;  /* one line for `shimbench --help` */
	const char *usage;    /* full text for `shimbench NAME --help` */
};

extern const char *shimbench_version;

/* Resets getopt so a command can parse its own argv. */
void cmd_getopt_reset(void);
/* Prints usage to stdout (help) and returns 0. */
int cmd_help(const char *usage);
/*
 * Opens the store a command reads from (--db); a missing file is an error
 * that says how to make one, never a new empty store. 0, or -1 after
 * error(); the caller closes *s.
 */
struct store;
int cmd_open_existing_store(const struct cmd_ctx *ctx, struct store **s);

/* Prints "error: MSG" and a hint to stderr; returns EXIT_USAGE. */
int cmd_usage_error(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int cmd_import(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_report(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_reproduce(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_import[], usage_report[], usage_reproduce[];
int cmd_run(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_export(int argc, char **argv, struct cmd_ctx *ctx);
int cmd_sessions(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_sessions[];
extern const char usage_run[], usage_export[];
int cmd_models(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_models[];
int cmd_doctor(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_doctor[];
int cmd_shim(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_shim[];

int cmd_compare(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_compare[];
int cmd_gate(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_gate[];
int cmd_history(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_history[];
int cmd_calibrate(int argc, char **argv, struct cmd_ctx *ctx);
extern const char usage_calibrate[];

#endif
