/*
 * A fixture child for test-proc: one behaviour per mode.
 *
 *   spew BYTES          BYTES to stdout and BYTES to stderr, interleaved
 *                       in uneven chunks: lines "o%09lu\n" / "e%09lu\n"
 *   exit CODE           exits with CODE
 *   segv                kills itself with SIGSEGV (no core file)
 *   hang                sleeps until killed
 *   hang-ignore-term    ignores SIGTERM, then sleeps until killed
 *   spawn-hang PIDFILE  forks a grandchild that hangs holding the pipes,
 *                       writes its pid to PIDFILE, then hangs itself
 *   env NAME...         prints NAME=VALUE or NAME unset, one per line
 *   cwd                 prints the working directory
 *   stdin               prints "devnull" when stdin is /dev/null, and
 *                       the number of bytes read from it
 *   args ARG...         prints each argument as <ARG> on its own line
 *   pgrp                prints "leader" when it leads its process group
 *   ready-hang FILE     creates FILE, then sleeps until killed
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static void
hang(void)
{
	for (;;)
		pause();
}

static void
spew(unsigned long bytes)
{
	/* Lines of 11 bytes; chunk sizes vary so the streams interleave. */
	unsigned long o = 0, e = 0, step = 1;
	char line[32];

	while (o < bytes / 11 || e < bytes / 11) {
		unsigned long i, n = (step * 37) % 500 + 1;

		for (i = 0; i < n && o < bytes / 11; i++, o++) {
			snprintf(line, sizeof(line), "o%09lu\n", o);
			fputs(line, stdout);
		}
		fflush(stdout);
		n = (step * 53) % 700 + 1;
		for (i = 0; i < n && e < bytes / 11; i++, e++) {
			snprintf(line, sizeof(line), "e%09lu\n", e);
			fputs(line, stderr);
		}
		fflush(stderr);
		step++;
	}
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int i;

	setvbuf(stderr, NULL, _IOFBF, 1 << 16);
	if (!strcmp(mode, "spew") && argc == 3) {
		spew(strtoul(argv[2], NULL, 10));
	} else if (!strcmp(mode, "exit") && argc == 3) {
		return atoi(argv[2]);
	} else if (!strcmp(mode, "segv")) {
		struct rlimit rl = { 0, 0 };

		setrlimit(RLIMIT_CORE, &rl);
		signal(SIGSEGV, SIG_DFL);
		kill(getpid(), SIGSEGV);
		return 99;
	} else if (!strcmp(mode, "hang")) {
		hang();
	} else if (!strcmp(mode, "hang-ignore-term")) {
		signal(SIGTERM, SIG_IGN);
		puts("ignoring SIGTERM");
		fflush(stdout);
		hang();
	} else if (!strcmp(mode, "spawn-hang") && argc == 3) {
		pid_t pid = fork();

		if (pid == 0)
			hang();
		if (pid > 0) {
			FILE *fp = fopen(argv[2], "w");

			if (fp) {
				fprintf(fp, "%ld\n", (long)pid);
				fclose(fp);
			}
		}
		hang();
	} else if (!strcmp(mode, "ready-hang") && argc == 3) {
		int fd = open(argv[2], O_WRONLY | O_CREAT, 0666);

		if (fd >= 0)
			close(fd);
		hang();
	} else if (!strcmp(mode, "env")) {
		for (i = 2; i < argc; i++) {
			const char *v = getenv(argv[i]);

			if (v)
				printf("%s=%s\n", argv[i], v);
			else
				printf("%s unset\n", argv[i]);
		}
	} else if (!strcmp(mode, "cwd")) {
		char dir[4096];

		if (!getcwd(dir, sizeof(dir)))
			return 3;
		puts(dir);
	} else if (!strcmp(mode, "stdin")) {
		struct stat a, b;
		char chunk[256];
		long total = 0;
		ssize_t n;

		if (fstat(0, &a) == 0 && stat("/dev/null", &b) == 0 &&
		    S_ISCHR(a.st_mode) && a.st_rdev == b.st_rdev)
			puts("devnull");
		while ((n = read(0, chunk, sizeof(chunk))) > 0)
			total += n;
		printf("read %ld\n", total);
	} else if (!strcmp(mode, "args")) {
		for (i = 2; i < argc; i++)
			printf("<%s>\n", argv[i]);
	} else if (!strcmp(mode, "pgrp")) {
		if (getpgrp() == getpid())
			puts("leader");
	} else {
		fprintf(stderr, "proc-child: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
