# parktrace build. `make demo` and `make test` install what is missing first.
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
BUILD := build
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I$(BUILD) -Ibpf -Iuser
LDLIBS := -lbpf -ldw -lelf -lz -lstdc++ -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -mcpu=v3 -Wall -Werror -Ivmlinux -Ibpf

USER_SRCS := $(wildcard user/*.c)
LIB_SRCS := $(filter-out user/main.c,$(USER_SRCS))
LIB_OBJS := $(LIB_SRCS:user/%.c=$(BUILD)/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
WORKLOADS := $(patsubst tools/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tools/workloads/*.c))
JAVA_WORKLOADS := $(patsubst tools/workloads/%.java,$(BUILD)/java/%.class,$(wildcard tools/workloads/*.java))

.PHONY: all deps demo test unit bench clean
all: $(BUILD)/parktrace $(WORKLOADS) $(JAVA_WORKLOADS)

deps:
	@tools/install-deps.sh

vmlinux/vmlinux.h:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/parktrace.bpf.o: bpf/parktrace.bpf.c $(wildcard bpf/*.h) vmlinux/vmlinux.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/parktrace.skel.h: $(BUILD)/parktrace.bpf.o
	$(BPFTOOL) gen skeleton $< name parktrace_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/%.o: user/%.c $(wildcard user/*.h) bpf/parktrace.h $(BUILD)/parktrace.skel.h | $(BUILD)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/parktrace: $(BUILD)/main.o $(LIB_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

$(BUILD)/workloads/%: tools/workloads/%.c tools/workloads/workload_time.h | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@ -lpthread -lm

$(BUILD)/java/%.class: tools/workloads/%.java | $(BUILD)
	@mkdir -p $(dir $@)
	javac -d $(BUILD)/java $<

$(BUILD):
	mkdir -p $(BUILD)

unit: $(UNIT_BINS)

demo: deps
	$(MAKE) all
	tools/demo.sh

test: deps
	$(MAKE) all unit
	tests/run.sh

bench: deps
	$(MAKE) all
	tools/bench/run.sh

clean:
	rm -rf $(BUILD) vmlinux/vmlinux.h
