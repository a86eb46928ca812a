# plugin.mk: build rules for a C plugin. A plugin's Makefile sets NAME (the
# integration name; the output is $(NAME).wasm) and includes this file:
#
#     NAME := newrelic
#     include ../../pdk/c/plugin.mk
#
# Every .c file of the plugin's folder is compiled together with the kit's
# workbench.c for wasm32-wasi as a reactor, with Debian's clang, lld,
# wasi-libc and libclang-rt-dev-wasm32. OUT overrides the output path.

WB_PDK_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
CLANG      ?= clang
OUT        ?= $(NAME).wasm
SRCS       ?= $(wildcard *.c)
HDRS       ?= $(wildcard *.h)

WB_CFLAGS  := --target=wasm32-wasi -mexec-model=reactor -std=c11 -Os \
              -Wall -Wextra -Werror -Wno-unused-parameter \
              -I$(WB_PDK_DIR)
WB_LDFLAGS := -Wl,--strip-all -Wl,--gc-sections

.PHONY: all clean
all: $(OUT)

$(OUT): $(SRCS) $(HDRS) $(WB_PDK_DIR)/workbench.c $(WB_PDK_DIR)/workbench.h
	$(CLANG) $(WB_CFLAGS) $(WB_LDFLAGS) -o $@ $(SRCS) $(WB_PDK_DIR)/workbench.c

clean:
	rm -f $(OUT)
