/*
 * LumeMetalCapabilities: a process-scoped Metal capability shim in plain
 * C over the Objective-C runtime. Injected with DYLD_INSERT_LIBRARIES,
 * it makes the Metal device of this one process answer:
 *
 *   supportsFamily:              original || 1001 <= f <= configured max
 *                                (Mac, Common, Metal, unknown: original)
 *   maxThreadgroupMemoryLength   min(original, configured), only if set:
 *                                it only ever lowers the device's answer
 *   recommendedMaxWorkingSetSize max(original, configured), only if set
 *
 * Configuration (LUME_METAL_*, see lmc_config.h) missing or malformed
 * leaves the process untouched and says why in one stderr line. Success
 * prints one marker line, the published banner. No clock, timing,
 * drawing or pipeline hooks; no time functions.
 *
 * Hooks go in before the first capability query: the constructor wraps
 * the private -[_MTLDevice initGPUFamilySupport] when it exists and
 * installs the capability hooks on the concrete class of the first
 * device that initialises; otherwise it asks MTLCreateSystemDefaultDevice
 * (or MTLCopyAllDevices), found with dlsym, for the device class at once.
 * Overriding the methods on that concrete class confines the change to it;
 * the original implementations are kept and always called.
 */
#ifndef __APPLE__
#define _GNU_SOURCE     /* RTLD_DEFAULT, program_invocation_short_name */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "lmc_config.h"
#include "lmc_objc.h"
#include "lmc_status.h"

#define LMC_EXPORT __attribute__((visibility("default")))

enum {
	ST_LOADING,
	ST_DISABLED,
	ST_ARMED,
	ST_INSTALLED,
	ST_FAILED,
};

static struct lmc_config cfg;
static atomic_int state = ST_LOADING;
static atomic_int clamp_said;   /* the threadgroup clamp line was printed */
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static IMP orig_init_family;
static IMP orig_supports_family;
static IMP orig_max_threadgroup;
static IMP orig_working_set;

static const char *
proc_name(void)
{
#ifdef __APPLE__
	return getprogname();
#else
	return program_invocation_short_name;
#endif
}

static const char *
get_env(const char *name)
{
	return getenv(name);
}

/* Writes one whole line to stderr with one write() where possible. */
static void
say(const char *line, size_t len)
{
	while (len) {
		ssize_t n = write(2, line, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		line += n;
		len -= (size_t)n;
	}
}

static void
refuse(const char *why)
{
	char line[400];

	say(line, lmc_format_refusal(line, sizeof(line), proc_name(), why));
}

/* Bounded concatenation of up to three strings into out (size n). */
static const char *
join3(char *out, size_t n, const char *a, const char *b, const char *c)
{
	const char *parts[3] = { a, b, c };
	size_t len = 0, i, k;

	for (i = 0; i < 3; i++)
		for (k = 0; parts[i][k] && len + 1 < n; k++)
			out[len++] = parts[i][k];
	out[len] = '\0';
	return out;
}

static BOOL
hook_supports_family(id self, SEL cmd, lmc_nsint family)
{
	BOOL orig = LMC_IMP_AS(BOOL (*)(id, SEL, lmc_nsint),
			       orig_supports_family)(self, cmd, family);

	return lmc_family_answer(&cfg, orig != 0, family) ? YES : NO;
}

/*
 * A configured limit above the device's answer is not honoured (the
 * shim never claims more than the hardware); the first such query says
 * so in one line.
 */
static lmc_nsuint
hook_max_threadgroup(id self, SEL cmd)
{
	lmc_nsuint orig = LMC_IMP_AS(lmc_nsuint (*)(id, SEL),
				     orig_max_threadgroup)(self, cmd);

	if (lmc_threadgroup_clamped(&cfg, orig) &&
	    !atomic_exchange(&clamp_said, 1)) {
		char line[400];

		say(line, lmc_format_clamp(line, sizeof(line), proc_name(),
					   &cfg, orig));
	}
	return (lmc_nsuint)lmc_threadgroup_answer(&cfg, orig);
}

static unsigned long long
hook_working_set(id self, SEL cmd)
{
	unsigned long long orig = LMC_IMP_AS(unsigned long long (*)(id, SEL),
					     orig_working_set)(self, cmd);

	return lmc_working_set_answer(&cfg, orig);
}

/*
 * Makes cls answer sel with imp without touching any other class: an
 * inherited method gets an override added on cls; a method cls defines
 * itself has its implementation replaced. (Apple's class_replaceMethod
 * does exactly this, but GNU libobjc's replaces the inherited method in
 * the superclass, changing every sibling class too; spelling it out
 * behaves the same on both.) m is class_getInstanceMethod(cls, sel).
 */
static void
override(Class cls, SEL sel, Method m, IMP imp)
{
	if (!class_addMethod(cls, sel, imp, method_getTypeEncoding(m)))
		method_setImplementation(m, imp);
}

/*
 * Replaces the capability methods on cls, and only on cls (override()). All required methods
 * are looked up before anything changes, so a missing one leaves the
 * class untouched. Returns 0, or -1 with *why set. Caller holds
 * install_lock.
 */
static int
install_hooks(Class cls, const char **why)
{
	static char msg[200];
	SEL s_family = sel_registerName("supportsFamily:");
	SEL s_tg = sel_registerName("maxThreadgroupMemoryLength");
	SEL s_ws = sel_registerName("recommendedMaxWorkingSetSize");
	Method m_family = class_getInstanceMethod(cls, s_family);
	Method m_tg = class_getInstanceMethod(cls, s_tg);
	Method m_ws = cfg.has_working_set ?
		class_getInstanceMethod(cls, s_ws) : NULL;

	if (!m_family || !m_tg || (cfg.has_working_set && !m_ws)) {
		*why = join3(msg, sizeof(msg),
			     "required device methods are unavailable on class '",
			     class_getName(cls), "'");
		return -1;
	}
	orig_supports_family = method_getImplementation(m_family);
	orig_max_threadgroup = method_getImplementation(m_tg);
	if (m_ws)
		orig_working_set = method_getImplementation(m_ws);

	override(cls, s_family, m_family, LMC_AS_IMP(hook_supports_family));
	override(cls, s_tg, m_tg, LMC_AS_IMP(hook_max_threadgroup));
	if (m_ws)
		override(cls, s_ws, m_ws, LMC_AS_IMP(hook_working_set));

	if (class_getMethodImplementation(cls, s_family) !=
	    LMC_AS_IMP(hook_supports_family) ||
	    class_getMethodImplementation(cls, s_tg) !=
	    LMC_AS_IMP(hook_max_threadgroup) ||
	    (m_ws && class_getMethodImplementation(cls, s_ws) !=
	     LMC_AS_IMP(hook_working_set))) {
		*why = join3(msg, sizeof(msg),
			     "capability hook installation was incomplete on class '",
			     class_getName(cls), "'");
		return -1;
	}
	return 0;
}

/*
 * Installs the hooks on cls the first time any thread gets here while
 * armed; every other caller returns only after that installation has
 * finished (or failed), so no capability query can run unhooked.
 */
static void
ensure_hooks(Class cls)
{
	const char *why = NULL;
	char line[400];

	if (atomic_load_explicit(&state, memory_order_acquire) != ST_ARMED)
		return;
	pthread_mutex_lock(&install_lock);
	if (atomic_load_explicit(&state, memory_order_relaxed) == ST_ARMED) {
		if (!cls) {
			why = "no Metal device class found";
		} else if (install_hooks(cls, &why) == 0) {
			atomic_store_explicit(&state, ST_INSTALLED,
					      memory_order_release);
			say(line, lmc_format_banner(line, sizeof(line),
						    proc_name(), &cfg));
		}
		if (why) {
			atomic_store_explicit(&state, ST_FAILED,
					      memory_order_release);
			refuse(why);
		}
	}
	pthread_mutex_unlock(&install_lock);
}

static void
hook_init_family(id self, SEL cmd)
{
	ensure_hooks(object_getClass(self));
	LMC_IMP_AS(void (*)(id, SEL), orig_init_family)(self, cmd);
}

static void
release(id obj)
{
	SEL s = sel_registerName("release");

	LMC_MSG(void (*)(id, SEL), obj, s)(obj, s);
}

/*
 * The class of the system's default Metal device, asked of Metal itself
 * (dlsym, so the shim links on systems without Metal). NULL when there is
 * none. The returned objects are +1 (Create/Copy rule) and released.
 */
static Class
default_device_class(void)
{
	id (*create)(void) = (id (*)(void))dlsym(RTLD_DEFAULT,
		"MTLCreateSystemDefaultDevice");
	id (*copy_all)(void) = (id (*)(void))dlsym(RTLD_DEFAULT,
		"MTLCopyAllDevices");
	Class cls = Nil;
	id dev, all;

	if (create && (dev = create()) != nil) {
		cls = object_getClass(dev);
		release(dev);
		return cls;
	}
	if (copy_all && (all = copy_all()) != nil) {
		SEL s_count = sel_registerName("count");
		SEL s_at = sel_registerName("objectAtIndex:");

		if (LMC_MSG(lmc_nsuint (*)(id, SEL), all, s_count)(all, s_count)) {
			dev = LMC_MSG(id (*)(id, SEL, lmc_nsuint), all, s_at)(
				all, s_at, 0);
			if (dev)
				cls = object_getClass(dev);
		}
		release(all);
	}
	return cls;
}

__attribute__((constructor))
static void
lmc_load(void)
{
	char why[200];
	SEL s_init = sel_registerName("initGPUFamilySupport");
	Class base;
	Method m;

	if (lmc_config_load(&cfg, get_env, proc_name(), why, sizeof(why)) < 0) {
		atomic_store(&state, ST_DISABLED);
		refuse(why);
		return;
	}
	say(cfg.threadgroup_note, cfg.threadgroup_note_len);
	base = objc_getClass("_MTLDevice");
	m = base ? class_getInstanceMethod(base, s_init) : NULL;
	atomic_store(&state, ST_ARMED);
	if (m) {
		orig_init_family = method_getImplementation(m);
		override(base, s_init, m, LMC_AS_IMP(hook_init_family));
		return;
	}
	ensure_hooks(default_device_class());
}

LMC_EXPORT const char *
lume_metal_capabilities_status(void)
{
	switch (atomic_load(&state)) {
	case ST_DISABLED:
		return "disabled";
	case ST_ARMED:
		return "armed";
	case ST_INSTALLED:
		return "installed";
	case ST_FAILED:
		return "failed";
	default:
		return "loading";
	}
}
