#ifndef CMD_CMD_H
#define CMD_CMD_H

/*
 * The subcommand interface. To add a command: write cmd/NAME.c defining
 * `const struct command cmd_NAME` (name, summary, synopsis, description,
 * option table, handler), declare it below, add its address to the table
 * in cmd/main.c and one object line to the Makefile. --help is built from
 * the same entry, so the help cannot drift from what is parsed.
 *
 * A handler returns its exit code (base/util.h EXIT_*): it parses its
 * options with cmd_parse(), makes one library call, renders the result.
 * Libraries only report errors.
 */

#include "base/opt.h"

#include <stddef.h>
#include <stdint.h>

struct command;

struct cmd_ctx {
	const char *db_path;          /* --db, $SHIMBENCH_DB, or ./shimbench.db */
	int quiet;                    /* --quiet: results only, no progress */
	const struct command *cmd;    /* the command (or subcommand) running */
};

struct command {
	const char *name;         /* "report", or "models verify" */
	int (*fn)(int argc, char **argv, struct cmd_ctx *ctx);
	const char *summary;      /* one line for `shimbench --help` */
	const char *synopsis;     /* after "usage: shimbench NAME " */
	const char *description;  /* paragraphs after the usage line, or NULL */
	const struct opt *opts;   /* its options (OPT_END-terminated), or NULL */
	const char *epilogue;     /* after the options (exit codes), or NULL */
	int min_args, max_args;   /* positional arguments; max_args -1: any */
	const struct command *const *subs;  /* subcommands, NULL-terminated */
};

extern const char *shimbench_version;

/*
 * Parses a command's argv (argv[0] is its name) by ctx->cmd's option
 * table into opts, and checks the number of positional arguments, which
 * come back in *args / *nargs (free(*args)). Returns 0; 1 after printing
 * --help to stdout; -1 after printing the error and a hint to stderr. A
 * handler returns `rc < 0 ? EXIT_USAGE : EXIT_OK` for a non-zero rc.
 */
int cmd_parse(struct cmd_ctx *ctx, int argc, char **argv, void *opts,
	      const char ***args, size_t *nargs);

/*
 * Runs the subcommand named by argv[1] of a command with subs (models,
 * shim), with ctx->cmd set to it.
 */
int cmd_dispatch(int argc, char **argv, struct cmd_ctx *ctx);

/*
 * Opens the store a command reads from (--db); a missing file is an error
 * that says how to make one, never a new empty store. 0, or -1 after
 * error(); the caller closes *s.
 */
struct store;
int cmd_open_existing_store(const struct cmd_ctx *ctx, struct store **s);
/*
 * The same for commands that only read (report, sessions, history,
 * export, compare, gate, reproduce): read-only, so a store on a read-only
 * mount or owned by another user can be read, and checked first
 * (store_verify()), so a damaged store is an error, never an answer or a
 * verdict on other numbers.
 */
int cmd_open_store_readonly(const struct cmd_ctx *ctx, struct store **s);

/*
 * Writes stored session sid as an evidence bundle into dir (bundle.h
 * flags), with the report built once: README.md and results.csv. md_out,
 * when not NULL, gets the Markdown tables. 0, or -1 after error().
 */
struct buf;
int cmd_write_bundle(struct store *s, int64_t sid, const char *dir,
		     unsigned flags, struct buf *md_out);

/*
 * Runs the plan at plan_path through run_session(): stores the session,
 * writes its bundle, prints progress and the report; returns the exit
 * code of `shimbench run`. Shared by run and calibrate PLAN.
 */
struct cmd_run_args {
	const char *bundle;       /* NULL: evidence/session-N[-k] */
	const char *models_dir, *label;
	long seed;                /* < 0: the plan's, else the clock */
	int strict, force;
	/* --until-decided (cmd/run-until.c) */
	int until_decided;
	const char *seq_baseline, *seq_json;   /* NULL baseline: auto */
	long seq_cap;
	double seq_threshold, seq_alpha;       /* percent; one-sided */
	long resume;              /* > 0: the session to resume */
};
int cmd_run_plan(struct cmd_ctx *ctx, const char *plan_path,
		 const struct cmd_run_args *a);
/*
 * run --until-decided: rounds of plan_path until seq_decide() decides
 * every workload against the baseline or the cap is reached; prints the
 * sequential verdict. The exit code: 0 pass, 1 regression (or a round's
 * run failed), 4 undecided at the cap, 2, 3 as run.
 */
int cmd_run_until_decided(struct cmd_ctx *ctx, const char *plan_path,
			  const struct cmd_run_args *a);

/* The run engine's progress callback (cmd/progress.c); ctx is this. */
struct cmd_progress {
	int quiet, tty;
};
struct run_event;
void cmd_run_progress(void *ctx, const struct run_event *e);
/* Long steps of the libraries (progress_note()) on one live line, when
 * stderr is a terminal and not --quiet; else nothing. */
void cmd_progress_steps(const struct cmd_ctx *ctx);
/* "WHAT: DONE/TOTAL UNIT (P %) · M:SS elapsed[ · ~M:SS left]" into out. */
void cmd_progress_fraction(char *out, size_t size, const char *what,
			   size_t done, size_t total, const char *unit,
			   double started);

/* Prints "error: MSG" and "see 'shimbench NAME --help'"; EXIT_USAGE. */
int cmd_usage_error(const struct cmd_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

extern const struct command cmd_doctor, cmd_run, cmd_export, cmd_sessions,
	cmd_import, cmd_report, cmd_compare, cmd_gate, cmd_history,
	cmd_calibrate, cmd_reproduce, cmd_models, cmd_shim, cmd_inspect,
	cmd_upgrade;

#endif
