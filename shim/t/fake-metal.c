/*
 * The fake Metal device (see fake-metal.h). Built from plain C with
 * objc_allocateClassPair/class_addMethod/objc_registerClassPair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-metal.h"

struct fake_calls fake_calls;
static enum fake_world world;
static id the_device;           /* what the fake Metal functions return */

int
fake_stock_family(long f)
{
	return (f >= 1001 && f <= 1005) || f == 2001 || f == 2002 ||
		(f >= 3001 && f <= 3003);
}

static void
m_init(id self, SEL cmd)
{
	atomic_fetch_add(&fake_calls.init, 1);
}

static BOOL
m_family(id self, SEL cmd, lmc_nsint f)
{
	atomic_fetch_add(&fake_calls.family, 1);
	return fake_stock_family(f) ? YES : NO;
}

static lmc_nsuint
m_tg(id self, SEL cmd)
{
	atomic_fetch_add(&fake_calls.tg, 1);
	return FAKE_STOCK_TG;
}

static unsigned long long
m_ws(id self, SEL cmd)
{
	atomic_fetch_add(&fake_calls.ws, 1);
	return FAKE_STOCK_WS;
}

static BOOL
m_unified(id self, SEL cmd)
{
	return YES;
}

static id
m_name(id self, SEL cmd)
{
	return fake_object_new("FakeString");
}

static const char *
m_utf8(id self, SEL cmd)
{
	return FAKE_DEVICE_NAME;
}

static void
m_release(id self, SEL cmd)
{
	atomic_fetch_add(&fake_calls.release, 1);
}

static lmc_nsuint
m_count(id self, SEL cmd)
{
	return 1;
}

static id
m_at(id self, SEL cmd, lmc_nsuint i)
{
	return i == 0 ? the_device : nil;
}

static void
add(Class c, const char *sel, IMP imp, const char *types)
{
	if (!class_addMethod(c, sel_registerName(sel), imp, types)) {
		fprintf(stderr, "fake-metal: cannot add %s\n", sel);
		abort();
	}
}

static Class
new_class(Class super, const char *name)
{
	Class c = objc_allocateClassPair(super, name, 0);

	if (!c) {
		fprintf(stderr, "fake-metal: cannot create class %s\n", name);
		abort();
	}
	return c;
}

void
fake_world_build(enum fake_world w)
{
	Class root = objc_getClass("Object");
	int private = w == FAKE_PRIVATE || w == FAKE_PRIVATE_NO_TG;
	Class base, c;

	world = w;
	if (!root) {
		fputs("fake-metal: no root class 'Object'\n", stderr);
		abort();
	}
	base = new_class(root, private ? "_MTLDevice" : "FakeMTLDeviceBase");
	if (private)
		add(base, "initGPUFamilySupport", LMC_AS_IMP(m_init), "v@:");
	add(base, "supportsFamily:", LMC_AS_IMP(m_family), LMC_BOOL_ENC "@:q");
	if (w != FAKE_PRIVATE_NO_TG)
		add(base, "maxThreadgroupMemoryLength", LMC_AS_IMP(m_tg), "Q@:");
	add(base, "recommendedMaxWorkingSetSize", LMC_AS_IMP(m_ws), "Q@:");
	add(base, "hasUnifiedMemory", LMC_AS_IMP(m_unified), LMC_BOOL_ENC "@:");
	add(base, "name", LMC_AS_IMP(m_name), "@@:");
	add(base, "release", LMC_AS_IMP(m_release), "v@:");
	objc_registerClassPair(base);

	/* The concrete classes inherit everything, as Metal's do. */
	objc_registerClassPair(new_class(base, "FakeParavirtualDevice"));
	objc_registerClassPair(new_class(base, "FakeOtherDevice"));

	c = new_class(root, "FakeString");
	add(c, "UTF8String", LMC_AS_IMP(m_utf8), "r*@:");
	objc_registerClassPair(c);

	c = new_class(root, "FakeArray");
	add(c, "count", LMC_AS_IMP(m_count), "Q@:");
	add(c, "objectAtIndex:", LMC_AS_IMP(m_at), "@@:Q");
	add(c, "release", LMC_AS_IMP(m_release), "v@:");
	objc_registerClassPair(c);

	if (w == FAKE_PUBLIC || w == FAKE_COPY_ALL)
		the_device = fake_device_new();
}

id
fake_object_new(const char *class_name)
{
	Class c = objc_getClass(class_name);

	if (!c) {
		fprintf(stderr, "fake-metal: no class %s\n", class_name);
		abort();
	}
	return class_createInstance(c, 0);
}

id
fake_device_new(void)
{
	return fake_object_new("FakeParavirtualDevice");
}

void
fake_device_init(id dev)
{
	SEL s = sel_registerName("initGPUFamilySupport");

	LMC_MSG(void (*)(id, SEL), dev, s)(dev, s);
}

int
fake_supports(id dev, long family)
{
	SEL s = sel_registerName("supportsFamily:");

	return LMC_MSG(BOOL (*)(id, SEL, lmc_nsint), dev, s)(dev, s, family)
		!= 0;
}

unsigned long
fake_tg(id dev)
{
	SEL s = sel_registerName("maxThreadgroupMemoryLength");

	return LMC_MSG(lmc_nsuint (*)(id, SEL), dev, s)(dev, s);
}

unsigned long long
fake_ws(id dev)
{
	SEL s = sel_registerName("recommendedMaxWorkingSetSize");

	return LMC_MSG(unsigned long long (*)(id, SEL), dev, s)(dev, s);
}

int
fake_is_stock_imp(Class cls, const char *sel)
{
	static const struct {
		const char *sel;
		IMP imp;
	} stock[] = {
		{ "initGPUFamilySupport", LMC_AS_IMP(m_init) },
		{ "supportsFamily:", LMC_AS_IMP(m_family) },
		{ "maxThreadgroupMemoryLength", LMC_AS_IMP(m_tg) },
		{ "recommendedMaxWorkingSetSize", LMC_AS_IMP(m_ws) },
	};
	IMP imp = class_getMethodImplementation(cls, sel_registerName(sel));
	size_t i;

	for (i = 0; i < sizeof(stock) / sizeof(stock[0]); i++)
		if (!strcmp(stock[i].sel, sel))
			return imp == stock[i].imp;
	return 0;
}

id
MTLCreateSystemDefaultDevice(void)
{
	atomic_fetch_add(&fake_calls.create, 1);
	return world == FAKE_PUBLIC ? the_device : nil;
}

id
MTLCopyAllDevices(void)
{
	atomic_fetch_add(&fake_calls.copy_all, 1);
	return world == FAKE_COPY_ALL ? fake_object_new("FakeArray") : nil;
}
