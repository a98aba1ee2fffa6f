# parktrace build. `make demo` and `make test` install what is missing first.
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
BUILD := build
CFLAGS ?= -O2 -g
# user/ by layer, top first (docs/design.md, "Layers"; make check-layers):
# a folder includes only its own headers and those of the folders after it.
USER_DIRS := user user/writers user/sources user/stacks user/jvm user/golang user/unwind user/proc user/kernel \
	user/model user/base
USER_INC := $(addprefix -I,$(USER_DIRS))
USER_HDRS := $(wildcard $(addsuffix /*.h,$(USER_DIRS)))
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I$(BUILD) -I$(BUILD)/proto -Ibpf $(USER_INC)
LDLIBS := -lbpf -ldw -lelf -lz -lprotobuf-c -lmicrohttpd -lstdc++ -lm
# profile.proto (pprof) is compiled to C by protoc-c at build time.
PROTO_C := $(BUILD)/proto/profile.pb-c.c
PROTO_H := $(BUILD)/proto/profile.pb-c.h
PROTO_OBJ := $(BUILD)/obj/proto/profile.pb-c.o
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -mcpu=v3 -Wall -Werror -Ivmlinux -Ibpf

USER_SRCS := $(wildcard $(addsuffix /*.c,$(USER_DIRS)))
LIB_SRCS := $(filter-out user/main.c,$(USER_SRCS))
LIB_OBJS := $(LIB_SRCS:user/%.c=$(BUILD)/obj/%.o) $(PROTO_OBJ)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
WORKLOADS := $(patsubst tools/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tools/workloads/*.c))
JAVA_WORKLOADS := $(patsubst tools/workloads/%.java,$(BUILD)/java/%.class,$(wildcard tools/workloads/*.java))
GO_WORKLOADS := $(patsubst tools/workloads/%.go,$(BUILD)/go/%,$(wildcard tools/workloads/*.go))
# A stripped copy, as distributions ship Go programs: only Go's own function
# table names its functions (docs/go.md).
GO_STRIPPED := $(BUILD)/go/go_mutex.stripped

.PHONY: soak all deps demo test unit bench clean install check check-layers check-docs check-options
# The benchmark's empty programs on parktrace's hooks (tools/bench/hooks_floor.c).
HOOKS_FLOOR := $(BUILD)/bench/hooks_floor
all: $(BUILD)/parktrace $(WORKLOADS) $(JAVA_WORKLOADS) $(GO_WORKLOADS) $(GO_STRIPPED) $(HOOKS_FLOOR)

deps:
	@tools/install-deps.sh

vmlinux/vmlinux.h:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/parktrace.bpf.o: bpf/parktrace.bpf.c $(wildcard bpf/*.h) vmlinux/vmlinux.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/parktrace.skel.h: $(BUILD)/parktrace.bpf.o
	$(BPFTOOL) gen skeleton $< name parktrace_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: user/%.c $(USER_HDRS) bpf/parktrace.h $(BUILD)/parktrace.skel.h $(PROTO_H) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# One rule makes both files: the header is the stamp.
$(PROTO_H): proto/profile.proto | $(BUILD)
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(BUILD)/proto --proto_path=proto $<
$(PROTO_C): $(PROTO_H)

$(PROTO_OBJ): $(PROTO_C) $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/parktrace: $(BUILD)/obj/main.o $(LIB_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

$(BUILD)/workloads/%: tools/workloads/%.c tools/workloads/workload_time.h | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@ -lpthread -lm

$(BUILD)/java/%.class: tools/workloads/%.java | $(BUILD)
	@mkdir -p $(dir $@)
	javac -d $(BUILD)/java $<

# Debian's Go, its build cache in the build tree (no home directory needed);
# frame pointers are Go's default on amd64.
$(BUILD)/go/%: tools/workloads/%.go | $(BUILD)
	@mkdir -p $(dir $@)
	GOCACHE=$(abspath $(BUILD))/gocache GOFLAGS=-trimpath go build -o $@ $<

$(GO_STRIPPED): $(BUILD)/go/go_mutex
	objcopy --strip-all $< $@

$(BUILD)/bench/hooks_floor.bpf.o: tools/bench/hooks_floor.bpf.c vmlinux/vmlinux.h | $(BUILD)
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/hooks_floor.skel.h: $(BUILD)/bench/hooks_floor.bpf.o
	$(BPFTOOL) gen skeleton $< name hooks_floor_bpf > $@.tmp && mv $@.tmp $@

$(HOOKS_FLOOR): tools/bench/hooks_floor.c $(BUILD)/bench/hooks_floor.skel.h
	$(CC) $(CFLAGS) -I$(BUILD)/bench $< -o $@ -lbpf -lelf -lz

$(BUILD):
	mkdir -p $(BUILD)

unit: $(UNIT_BINS)

# The repository's rules, run by make test too (tests/checks/): the layers of
# user/ (docs/design.md, "Layers"), the docs' links and paths, and the
# options named alike in the code, --help, the man page, the completion and
# the docs.
check: check-layers check-docs check-options

check-layers:
	python3 tests/checks/check_layers.py

check-docs:
	python3 tests/checks/check_docs.py

check-options:
	python3 tests/checks/check_options.py

demo: deps
	$(MAKE) all
	tools/demo.sh

# Built as many at once as there are CPUs: make test's 20 minutes.
test: deps
	$(MAKE) -j$$(nproc) all unit
	tests/run.sh

# The same suite with one core kept busy by a load it starts (tests/README.md
# records the runs).
.PHONY: test-loaded
test-loaded: deps
	$(MAKE) -j$$(nproc) all unit
	tests/loaded.sh

bench: deps
	$(MAKE) all
	tools/bench/run.sh

# An hour system-wide under the real servers and churn; not in CI (docs/soak.md).
soak: deps
	$(MAKE) all
	python3 tools/soak/soak.py

clean:
	rm -rf $(BUILD) vmlinux/vmlinux.h

# make install [PREFIX=/usr/local] [DESTDIR=staging]: the binary, its man
# page, the systemd unit (its ExecStart names the installed binary), the
# unit's options file (kept when there is one) and bash completion.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
install: $(BUILD)/parktrace
	install -D -m 0755 $(BUILD)/parktrace $(DESTDIR)$(SBINDIR)/parktrace
	install -D -m 0644 dist/parktrace.8 $(DESTDIR)$(MANDIR)/man8/parktrace.8
	@mkdir -p $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' dist/parktrace.service.in \
		> $(DESTDIR)$(UNITDIR)/parktrace.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/parktrace.service
	install -D -m 0644 dist/parktrace.socket $(DESTDIR)$(UNITDIR)/parktrace.socket
	install -D -m 0644 dist/parktrace.bash-completion $(DESTDIR)$(COMPLETIONDIR)/parktrace
	@# The endpoint's bearer token (--listen-token): made once, root's alone.
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/parktrace/token ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/parktrace/token"; \
	else \
		install -d -m 0700 $(DESTDIR)$(SYSCONFDIR)/parktrace && \
		(umask 077; od -An -tx1 -N24 /dev/urandom | tr -d ' \n' > $(DESTDIR)$(SYSCONFDIR)/parktrace/token); \
	fi
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/default/parktrace ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/default/parktrace"; \
	else \
		install -D -m 0644 dist/parktrace.default $(DESTDIR)$(SYSCONFDIR)/default/parktrace; \
	fi

# Fuzzing (issue #12): one libFuzzer target per parser of another process's
# data (tests/fuzz/fuzz_*.c), under ASan and UBSan, in a build directory of
# its own. The library is an archive so each target links only what it uses;
# FUZZ_WRAP_<target> replaces a reader's sources of data (--wrap) with the
# target's fake ones.
BUILD_FUZZ := $(BUILD)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_TIMEOUT ?= 10
FUZZ_RSS_MB ?= 1024
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $(FUZZ_SAN) \
	-I$(BUILD) -I$(BUILD)/proto -Ibpf $(USER_INC)
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_TARGETS:%=$(BUILD_FUZZ)/fuzz_%)
FUZZ_OBJS := $(LIB_SRCS:user/%.c=$(BUILD_FUZZ)/obj/%.o)
FUZZ_WRAP_attach := -Wl,--wrap=attach_socket_open
FUZZ_WRAP_vmstructs := -Wl,--wrap=procmaps_get,--wrap=procmaps_refresh,--wrap=procmaps_elf \
	-Wl,--wrap=elfsyms_find,--wrap=procmem_open

.PHONY: fuzz fuzz-build
fuzz: fuzz-build
	tests/fuzz/run.sh $(BUILD_FUZZ) $(FUZZ_SECONDS) $(FUZZ_TIMEOUT) $(FUZZ_RSS_MB) $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_BINS) $(BUILD_FUZZ)/seed_elf

$(BUILD_FUZZ)/obj/%.o: user/%.c $(USER_HDRS) bpf/parktrace.h $(BUILD)/parktrace.skel.h $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD_FUZZ)/libpt.a: $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD_FUZZ)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(BUILD_FUZZ)/libpt.a
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(BUILD_FUZZ)/libpt.a $(FUZZ_WRAP_$*) -o $@ $(LDLIBS)

# Tiny real ELF files as the ELF readers' seeds: one with .eh_frame, one with
# .debug_frame only, and a stripped copy of the first whose .gnu_debuglink
# names the second.
FUZZ_SEED_ELF := -shared -fPIC -nostdlib -Wl,--build-id -Wl,-z,noseparate-code -Wl,-z,norelro \
	-Wl,-z,max-page-size=16
$(BUILD_FUZZ)/seed_elf: tests/fuzz/seed_elf.c
	@mkdir -p $(dir $@)
	$(CLANG) -O1 $(FUZZ_SEED_ELF) $< -o $@
	$(CLANG) -O1 -g -fno-asynchronous-unwind-tables $(FUZZ_SEED_ELF) $< -o $@-debug_frame
	objcopy --strip-all --add-gnu-debuglink=$@-debug_frame $@ $@-stripped

# Mutation check (issue #13), not part of `make test` (minutes per mutant):
# each tests/mutants/*.patch is a small bug built in a copy of HEAD; the
# integration files that should catch it must fail. MUTANTS="[--all] [--baseline]
# [name...]" passes options and chooses mutants (default: all of them).
.PHONY: mutants
mutants: all
	tests/mutants/run.sh $(MUTANTS)
