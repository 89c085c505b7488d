#ifndef TEST_H
#define TEST_H

/*
 * A tiny table-driven test runner. Each test-*.c defines TESTS as an
 * array of { name, fn } and calls test_main(). CHECK() records a failure
 * with file and line but lets the test go on. The last line printed is
 * "N passed, N failed" (a test passes when none of its checks failed).
 */

#include <stdio.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

static int test_failed_checks;

#define CHECK(cond) do { \
	if (!(cond)) { \
		test_failed_checks++; \
		printf("  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) { \
		test_failed_checks++; \
		printf("  FAIL %s:%d: '%s' != '%s'\n", __FILE__, __LINE__, \
		       a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} \
} while (0)

#define CHECK_NEAR(a, b, eps) do { \
	double a_ = (a), b_ = (b); \
	if (!(a_ - b_ <= (eps) && b_ - a_ <= (eps))) { \
		test_failed_checks++; \
		printf("  FAIL %s:%d: %.10g != %.10g\n", __FILE__, __LINE__, \
		       a_, b_); \
	} \
} while (0)

static inline int
test_main(const struct test_case *tests, size_t n)
{
	size_t i;
	int passed = 0, failed = 0;

	for (i = 0; i < n; i++) {
		int before = test_failed_checks;
		tests[i].fn();
		if (test_failed_checks == before) {
			passed++;
			printf("ok %s\n", tests[i].name);
		} else {
			failed++;
			printf("not ok %s\n", tests[i].name);
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#define TEST_MAIN(tests) \
	int main(void) { return test_main(tests, sizeof(tests) / sizeof(tests[0])); }

#endif
