#ifndef FAKE_METAL_H
#define FAKE_METAL_H

/*
 * A fake Metal device built at run time with the Objective-C runtime
 * API (the GNU runtime on Linux), for testing the shim's hooks where no
 * Metal exists. It answers like the stock paravirtual device of a macOS
 * guest (Apple5, Mac2, Common3, no Metal3, 32 KB threadgroup memory)
 * and counts every call of its original methods.
 *
 * The program exports MTLCreateSystemDefaultDevice and MTLCopyAllDevices
 * (link with -rdynamic) so the shim's dlsym fallback finds them.
 */

#include <stdatomic.h>

#include "../src/lmc_objc.h"

enum fake_world {
	/* The private base class "_MTLDevice" with initGPUFamilySupport. */
	FAKE_PRIVATE,
	/* No "_MTLDevice"; MTLCreateSystemDefaultDevice returns a device. */
	FAKE_PUBLIC,
	/* No "_MTLDevice"; only MTLCopyAllDevices returns a device. */
	FAKE_COPY_ALL,
	/* No "_MTLDevice" and no device at all. */
	FAKE_NONE,
	/* Like FAKE_PRIVATE, but the device lacks maxThreadgroupMemoryLength. */
	FAKE_PRIVATE_NO_TG,
};

#define FAKE_STOCK_TG 32768UL
#define FAKE_STOCK_WS 12009275392ULL    /* 11453 MB, as in the evidence */
#define FAKE_DEVICE_NAME "Apple Paravirtual device"

struct fake_calls {
	atomic_long init, family, tg, ws, release, create, copy_all;
};
extern struct fake_calls fake_calls;

/* Registers the classes of one world; call once per process. */
void fake_world_build(enum fake_world w);
/* The stock answer of the fake device for family f. */
int fake_stock_family(long f);
/* A new instance of the concrete device class (FakeParavirtualDevice),
 * or of another class of the world by name. */
id fake_device_new(void);
id fake_object_new(const char *class_name);
/* Sends initGPUFamilySupport, as Metal does when it creates a device. */
void fake_device_init(id dev);
/* Whether cls answers sel with the fake's own implementation. */
int fake_is_stock_imp(Class cls, const char *sel);
/* The three capability queries, sent as messages. */
int fake_supports(id dev, long family);
unsigned long fake_tg(id dev);
unsigned long long fake_ws(id dev);

id MTLCreateSystemDefaultDevice(void);
id MTLCopyAllDevices(void);

#endif
