#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "run/launchagent.h"
#include "base/files.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

const char usage_shim[] =
	"usage: shimbench shim launchagent --label LABEL --program PATH\n"
	"           --library DYLIB --family-max N [--threadgroup-memory N]\n"
	"           [--working-set N] [--stdout PATH] [--stderr PATH]\n"
	"           [-o FILE] [-- ARGS...]\n"
	"\n"
	"Writes a per-workload LaunchAgent property list that starts PATH\n"
	"with ARGS (one ProgramArguments string each) and the Metal\n"
	"capability shim injected through its own EnvironmentVariables:\n"
	"DYLD_INSERT_LIBRARIES=DYLIB and LUME_METAL_APPLE_FAMILY_MAX=N\n"
	"(plus LUME_METAL_MAX_THREADGROUP_MEMORY and\n"
	"LUME_METAL_RECOMMENDED_WORKING_SET_SIZE when given). No RunAtLoad\n"
	"or KeepAlive. Then prints the plutil -lint, launchctl bootstrap,\n"
	"kickstart and rollback (bootout, remove the plist) commands.\n"
	"Never use `launchctl setenv` for the shim: it reaches every job.\n"
	"\n"
	"  --label LABEL            launchd label: letters, digits, . - _\n"
	"  --program PATH           absolute path of the workload\n"
	"  --library DYLIB          absolute path of the shim dylib (the\n"
	"                           arm64e one for arm64e programs)\n"
	"  --family-max N           highest Apple GPU family, 1001-1999\n"
	"  --threadgroup-memory N   bytes (shim default 65536)\n"
	"  --working-set N          recommendedMaxWorkingSetSize in bytes\n"
	"  --stdout PATH, --stderr PATH\n"
	"                           log files (default /tmp/LABEL.stdout.log\n"
	"                           and /tmp/LABEL.stderr.log)\n"
	"  -o FILE                  write the plist to FILE (usually\n"
	"                           ~/Library/LaunchAgents/LABEL.plist) and\n"
	"                           the commands to stdout; without -o the\n"
	"                           plist goes to stdout, the commands to\n"
	"                           stderr\n"
	"\n"
	"See shim/README.md for building, verifying and rolling back.\n";

static int
launchagent(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "label", required_argument, NULL, 'L' },
		{ "program", required_argument, NULL, 'P' },
		{ "library", required_argument, NULL, 'D' },
		{ "family-max", required_argument, NULL, 'F' },
		{ "threadgroup-memory", required_argument, NULL, 'T' },
		{ "working-set", required_argument, NULL, 'W' },
		{ "stdout", required_argument, NULL, 'O' },
		{ "stderr", required_argument, NULL, 'E' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct launchagent la = { 0 };
	struct buf plist = BUF_INIT, cmds = BUF_INIT;
	const char *output = NULL;
	int c, ret = EXIT_OK;

	/* '+': stop at the first non-option, so nothing is permuted and
	 * every program argument comes after "--". */
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'L': la.label = optarg; break;
		case 'P': la.program = optarg; break;
		case 'D': la.library = optarg; break;
		case 'F': la.family_max = optarg; break;
		case 'T': la.threadgroup = optarg; break;
		case 'W': la.working_set = optarg; break;
		case 'O': la.stdout_path = optarg; break;
		case 'E': la.stderr_path = optarg; break;
		case 'o': output = optarg; break;
		case 'h': return cmd_help(usage_shim);
		case ':':
			return cmd_usage_error_name("shim", "option '%s' needs a value",
					       argv[optind - 1]);
		default:
			return cmd_usage_error_name("shim", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--"))
		return cmd_usage_error_name("shim", "unexpected argument '%s' "
				       "(program arguments go after --)",
				       argv[optind]);
	if (!la.label || !la.program || !la.library || !la.family_max)
		return cmd_usage_error_name("shim", "--label, --program, --library "
				       "and --family-max are required");
	la.args = argv + optind;
	la.nargs = (size_t)(argc - optind);

	if (launchagent_validate(&la) < 0 || launchagent_plist(&plist, &la) < 0) {
		ret = EXIT_USAGE;
		goto cleanup;
	}
	launchagent_commands(&cmds, &la, output);
	if (output) {
		if (write_file_atomic(output, plist.buf, plist.len) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		fputs(cmds.buf, stdout);
	} else {
		fputs(plist.buf, stdout);
		fputs(cmds.buf, stderr);
	}
	if (fflush(stdout) != 0) {
		error("cannot write to stdout");
		ret = EXIT_ENV;
	}
cleanup:
	buf_release(&plist);
	buf_release(&cmds);
	return ret;
}

static int
cmd_shim_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	(void)ctx;
	if (argc < 2)
		return cmd_usage_error_name("shim", "missing subcommand "
				       "(launchagent)");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(usage_shim);
	if (!strcmp(argv[1], "launchagent")) {
		cmd_getopt_reset();
		return launchagent(argc - 1, argv + 1);
	}
	return cmd_usage_error_name("shim", "unknown subcommand '%s'", argv[1]);
}

LEGACY_COMMAND(shim, "a LaunchAgent that runs one server with the capability shim", cmd_shim_main, usage_shim);
