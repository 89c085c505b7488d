# Extra dependency lines: CHECK DEBIAN-PACKAGE BREW-FORMULA (see deps.sh)
c:python3                  python3               python3
# shim: GNU Objective-C runtime (Linux hook tests), clang + lld + llvm
# (Mach-O cross-check of the shim); macOS builds with Xcode's tools
h:objc/runtime.h           libobjc-12-dev        -
c:clang                    clang                 -
c:ld64.lld-14              lld-14                -
c:llvm-nm-14               llvm-14               -
c:llvm-objdump-14          llvm-14               -
# the shim's arm64e code with pointer authentication (-fptrauth-*):
# clang 19 and its disassembler, both shipped by Debian 12 itself
c:clang-19                 clang-19              -
c:llvm-objdump-19          llvm-19               -
c:xmllint                  libxml2-utils         libxml2
c:pgrep                   procps                -
c:strings                 binutils              -
# report: charts drawn by gnuplot; the HTML report rendered by headless
# Chromium in the tests
c:gnuplot                 gnuplot-nox           gnuplot
c:chromium                chromium              -
# remote targets: the ssh transport's tests run a real sshd on loopback
c:ssh                     openssh-client        -
f:/usr/sbin/sshd          openssh-server        -
# models fetch: curl downloads the manifest's models
c:curl                    curl                  -
# CI: the workflows' test parses them with Debian's python3-yaml
f:/usr/lib/python3/dist-packages/yaml/__init__.py python3-yaml -
# fuzzing (make fuzz, bench/scripts/fuzz.sh): clang-14's libFuzzer and
# sanitizer runtimes (the path is x86-64's; make check only replays the
# corpora, with the compiler's own sanitizers)
c:clang-14                clang-14              -
f:/usr/lib/clang/14/lib/linux/libclang_rt.fuzzer-x86_64.a  libclang-rt-14-dev  -
