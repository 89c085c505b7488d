#ifndef ANALYSIS_CAPTABLE_H
#define ANALYSIS_CAPTABLE_H

/*
 * The report's "Capabilities each variant reported" table: one row per
 * variant, its median t/s per test beside the capability facts its runs
 * recorded (analysis/capfacts.h).
 */

struct report;
struct table;

/*
 * Variant, role, median t/s per test, capabilities reported (table_init()
 * here; the caller releases t). No rows when no run recorded any facts.
 */
void capfacts_table(const struct report *r, struct table *t);

#endif
