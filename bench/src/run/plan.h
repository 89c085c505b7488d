#ifndef PLAN_H
#define PLAN_H

/*
 * Plans (JSON, documented in README.md): models, targets, variants, the
 * llama-bench arguments, processes per variant, order, seed, timeout.
 * A model (or a variant) with "runtime": "mlx-lm" runs MLX-LM's benchmark
 * instead of llama-bench (mlx_lm: its command and extra arguments; its
 * prompt, generation and trial counts follow llama-bench's -p, -n, -r).
 * Unknown keys and wrong types are errors naming the key and its path.
 * Everything in a struct plan is owned by it; plan_free() releases it.
 */

#include <stddef.h>

struct transport;

struct plan_model {
	char *name;      /* manifest name or free name */
	char *label;     /* display name (manifest label, or name) */
	char *path;      /* resolved file path */
	char *sha256;    /* expected, or NULL when neither plan nor manifest has it */
	long long model_size, n_params;   /* manifest facts, -1 unknown */
	char *runtime;   /* "llama.cpp" (default) or "mlx-lm": for mlx-lm,
			    path is MLX-LM's --model (a directory or a
			    repository id; default: name), never hashed */
};

struct plan_target {
	char *name;
	char *transport;     /* its name: "local", "ssh", "lume", "tart" */
	const struct transport *tp;  /* its row (transport.h), set by the loader */
	char *host, *user, *vm;   /* remote transports */
	char *llama_bench;   /* path on the target, or NULL */
	char *mlx_lm;        /* MLX-LM's benchmark program there, or NULL */
	double timeout;      /* per-process timeout here; 0: the plan's */
	int port;            /* ssh port, 0: default */
	char **ssh_options;  /* extra ssh arguments, NULL-terminated, or NULL */
};

struct plan_variant {
	char *name;
	char *target;
	char *role;          /* bare-metal, stock, shim, or free (default "other") */
	char **env_set;      /* "K=V", NULL-terminated */
	char **env_unset;    /* names, NULL-terminated */
	char *inject_lib;    /* library to inject, or NULL */
	char *inject_sha256;
	int inject_append;   /* append to an existing LD_PRELOAD/DYLD_INSERT_LIBRARIES */
	char *runtime;       /* runs only models of this runtime; NULL: all */
	char **expect;       /* markers of llama.cpp runs, NULL-terminated */
	size_t nexpect;
	char **expect_mlx;   /* markers of mlx-lm runs, NULL-terminated */
	size_t nexpect_mlx;
	char **probe_argv;   /* capability probe to run first, or NULL */
	char *probe_expect;  /* JSON object: dotted path -> expected value */
};

struct plan {
	char *name;
	char *json;          /* the plan as loaded, compact */
	struct plan_model *models;
	size_t nmodels;
	struct plan_target *targets;
	size_t ntargets;
	struct plan_variant *variants;
	size_t nvariants;
	char *llama_bench;   /* llama_bench.path, or NULL */
	char **args;         /* llama-bench arguments (no -m, no -o), NULL-terminated */
	char **mlx_command;  /* mlx_lm.command (default mlx_lm.benchmark) */
	char **mlx_args;     /* mlx_lm.args, appended, NULL-terminated */
	long mlx_prompt, mlx_gen, mlx_trials;  /* -p, -g, -n: from
			        llama-bench's -p, -n, -r (defaults 512, 128, 5) */
	int processes;       /* per variant and model, K >= 1 */
	int interleaved;     /* 1 interleaved (default), 0 grouped */
	unsigned long long seed;
	int seed_given;
	double timeout;      /* per process, seconds */
};

/*
 * Loads a plan from path. Model entries naming a manifest model take its
 * path, SHA-256 and facts (models_dir: where manifest files live, NULL
 * for "models"). Returns 0, or -1 after error().
 */
int plan_load(const char *path, const char *models_dir, struct plan *p);
/* The same from a JSON text; `name` is used in messages. */
int plan_parse(const char *text, size_t len, const char *name,
	       const char *models_dir, struct plan *p);
void plan_free(struct plan *p);

const struct plan_target *plan_target(const struct plan *p, const char *name);

#define PLAN_LLAMA "llama.cpp"
#define PLAN_MLX "mlx-lm"

/* 1 when variant v runs model m: the variant takes every runtime or m's. */
int plan_runs(const struct plan *p, size_t m, size_t v);
/* 1 when model m runs on MLX-LM. */
int plan_model_mlx(const struct plan *p, size_t m);

/*
 * Pins a variant's injected library in the plan file at path: sets
 * inject.sha256 to sha256 and, when library is not NULL, inject.library
 * to it (a variant without "inject" needs library). The file is parsed,
 * edited and printed through base/json.h, so every other key and value
 * is kept; the result must load as a plan (models_dir as for plan_load)
 * before it atomically replaces the file. *old gets the previous pin
 * (NULL when there was none; the caller frees it). 0, or -1 after error().
 */
int plan_pin_inject(const char *path, const char *variant,
		    const char *library, const char *sha256,
		    const char *models_dir, char **old);

#endif
