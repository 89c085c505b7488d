# Checks arm64e code for pointer authentication, reading the output of
# `llvm-objdump -d --no-show-raw-insn FILE` (one or more files; Apple's
# objdump is llvm-objdump and prints the same). Every function (from its
# `<name>:` line to the next) must:
#
#   - branch and call indirectly only with an authenticating instruction
#     (braa, brab, braaz, brabz, blraa, blrab, blraaz, blrabz): a plain
#     br or blr jumps to whatever a corrupted pointer says;
#   - if it stores the return address (x30) to memory, sign it first:
#     pacibsp (or paciasp) as its first instruction;
#   - after restoring x30 from memory, authenticate it before leaving:
#     retab/retaa, or autibsp/autiasp before a tail branch; a plain ret
#     there returns to whatever was on the stack.
#
# A leaf function that never stores x30 may return with a plain ret: its
# return address never left the register.
#
# Prints one "# unauthenticated: FUNCTION+OFFSET: INSTRUCTION (why)"
# line per offence and a last line "pac-check: N functions, N
# instructions, N signed frames, N authenticated calls, N offences";
# exits 1 on any offence, and also when it saw no instruction at all or
# (with -v strict=1, the default) no pacibsp and no authenticated call,
# since then the disassembler did not decode what it was given.
BEGIN {
	if (strict == "")
		strict = 1
	nfunc = 0; ninsn = 0; nsigned = 0; nauth = 0; nbad = 0
}

function offend(why) {
	printf "# unauthenticated: %s: %s (%s)\n", fn, insn, why
	nbad++
}

# Whether x30 is among the registers before the memory operand of a
# store or load ("stp x29, x30, [sp, #0x10]"): #0x30 immediates and
# other registers do not count.
function has_x30(ops,   regs) {
	regs = ops
	sub(/\[.*/, "", regs)
	return regs ~ /(^|[ ,{])(x30|lr)([ ,}]|$)/
}

/^[0-9a-f]+ <[^>]+>:$/ {
	fn = $2
	sub(/^</, "", fn); sub(/>:$/, "", fn)
	nfunc++
	first = 1; signed = 0; pending = 0
	next
}

/^ *[0-9a-f]+:[ \t]/ {
	line = $0
	sub(/^ *[0-9a-f]+:[ \t]+/, "", line)
	sub(/[ \t]*;.*$/, "", line)
	if (line == "")
		next
	ninsn++
	op = line
	sub(/[ \t].*$/, "", op)
	ops = line
	sub(/^[^ \t]+[ \t]*/, "", ops)
	insn = line
	if (fn == "")
		fn = "(no symbol)"

	if (op == "pacibsp" || op == "paciasp") {
		if (first)
			signed = 1
		nsigned++
	}
	first = 0
	if (op == "br" || op == "blr") {
		offend("indirect branch without authentication")
	} else if (op ~ /^(braa|brab|braaz|brabz|blraa|blrab|blraaz|blrabz)$/) {
		nauth++
		if (pending && op ~ /^br/)
			offend("tail branch with x30 restored but not authenticated")
	} else if (op == "retaa" || op == "retab") {
		if (!signed)
			offend("authenticated return in a function that did not sign x30")
		pending = 0
	} else if (op == "ret") {
		if (signed || pending)
			offend("plain return after x30 was stored to memory")
	} else if (op == "autibsp" || op == "autiasp") {
		pending = 0
	} else if (op ~ /^(stp|str|stur)$/ && has_x30(ops)) {
		if (!signed)
			offend("x30 stored to memory without pacibsp first")
	} else if (op ~ /^(ldp|ldr|ldur)$/ && has_x30(ops)) {
		pending = 1
	} else if (op == "b" && pending) {
		offend("tail call with x30 restored but not authenticated")
	}
}

END {
	printf "pac-check: %d functions, %d instructions, %d signed frames, %d authenticated calls, %d offences\n",
		nfunc, ninsn, nsigned, nauth, nbad
	if (nbad)
		exit 1
	if (ninsn == 0 || (strict && nsigned == 0 && nauth == 0)) {
		print "# no instructions, or no pointer authentication at all: nothing was checked"
		exit 1
	}
	exit 0
}
