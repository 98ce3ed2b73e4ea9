# reduction: a step-by-step CUDA C tutorial on parallel reduction. `make help` lists the targets.

ARCH ?= native# the GPU to build for: native (this machine's), sm_90 (H100, H200), sm_80 (A100), ...
TYPE ?= int#    element type: int (int32) or float (float32, built into build/float)
NVCC ?= nvcc
# Why there is no GPU here, if there is none: nvidia-smi, which comes with the driver, lists none,
# or (without it) the driver is not there. It builds nothing, so a GPU-only target refuses at once.
NO_GPU = $(shell if command -v nvidia-smi >/dev/null; then nvidia-smi -L 2>/dev/null | \
  grep -q '^GPU ' || echo 'the driver sees no GPU: nvidia-smi -L lists none'; \
  else ls /proc/driver/nvidia/gpus/* >/dev/null 2>&1 || echo 'no NVIDIA driver is installed'; fi)
# Where the GPU stages run: gpu (nvcc, on a CUDA GPU) or cpu (the CPU model of model/: the stages'
# own files compiled with g++ by model/cucc, no CUDA toolkit, no GPU). Without a GPU, cpu.
# SANITIZER: what the model's builds check besides barriers and warp-synchronous calls, which it
# always checks: address (AddressSanitizer, the default) or thread (ThreadSanitizer: races; make
# test builds each stage so too, into BUILD/thread/, and runs it).
MODEL ?= $(if $(NO_GPU),cpu,gpu)
SANITIZER ?= address
ifeq ($(MODEL),cpu)
NVCC := CUCC_SANITIZE=$(SANITIZER) bash model/cucc
else ifneq ($(MODEL),gpu)
$(error MODEL must be gpu or cpu, not '$(MODEL)')
else ifeq ($(ARCH),native)
# Without a GPU nvcc cannot tell what 'native' is, and warns so for every file: build for the oldest
# architecture it supports instead, and say so once (exported: the sub-makes inherit the choice).
ifneq ($(NO_GPU),)
ARCH := $(or $(firstword $(shell $(NVCC) --list-gpu-code 2>/dev/null)),native)
ifneq ($(filter-out diff help slides figures plot clean,$(or $(MAKECMDGOALS),all)),)
$(info make: no GPU here, so ARCH=native means nothing: building for $(ARCH) (ARCH=sm_90: H100, H200).)
endif
endif
endif
export ARCH MODEL
, := ,# a comma, inside the arguments of $(call ...)

ifeq ($(TYPE),float)
BUILD ?= build/float
TYPEFLAGS := -DREDUCE_FLOAT
else ifneq ($(TYPE),int)
$(error TYPE must be int or float, not '$(TYPE)')
endif
BUILD ?= build
# What BUILD was built as: when MODEL, SANITIZER or ARCH change, every object is built again.
FLAVOR := MODEL=$(MODEL) $(if $(filter cpu,$(MODEL)),SANITIZER=$(SANITIZER),ARCH=$(ARCH)) TYPE=$(TYPE)
FLAVOR_FILE := $(BUILD)/obj/flavor
$(shell mkdir -p $(BUILD)/obj && { [ "$$(cat $(FLAVOR_FILE) 2>/dev/null)" = "$(FLAVOR)" ] || \
  echo "$(FLAVOR)" > $(FLAVOR_FILE); })

# The stages: the folders stepNN_name/ with a reduce.c or reduce.cu, as common/stages.sh lists them
# for every script and test (the tests get it as STAGE_LIST). step09_multi_gpu/ is a program of its
# own (below), not a stage of this harness.
STAGES := $(shell bash common/stages.sh)
SHORT := $(foreach s,$(STAGES),$(firstword $(subst _, ,$(s))))# step00 step01 ...
GPU_SHORT := $(filter-out step00,$(SHORT))
long = $(filter $(1)_%,$(STAGES))# step04 -> step04_smem
# Variants: one stage with one change, kept as bench/variants/NAME.patch (bench/variant.sh).
VARIANTS := $(basename $(notdir $(wildcard bench/variants/*.patch)))
name = $(or $(call long,$(1)),$(1))# step04 -> step04_smem, step06_cf4 -> step06_cf4
# The stage's file; make grade SRC= builds a student's file as stage GRADE_STEP, into its own BUILD.
src = $(if $(and $(GRADE_SRC),$(filter $(1),$(GRADE_STEP))),$(GRADE_SRC),$(or \
      $(wildcard $(call long,$(1))/reduce.c*),$(BUILD)/variants/$(1).cu))

CFLAGS := -std=c11 -O2 -Wall -Wextra -fwrapv -Icommon $(TYPEFLAGS)
CXXFLAGS := -std=c++20 -O2 -Wall -Wextra -Icommon
NVCCFLAGS := -std=c++20 -O3 -arch=$(ARCH) -lineinfo -Icommon $(TYPEFLAGS) \
             -Xcompiler -Wall,-Wextra,-fwrapv,-Wno-missing-field-initializers

# Criterion: the vendored copy from `make deps VENDOR=1` (tests/deps.sh) if there is one, else the
# system's. The rpath lets build/test_* find the vendored libraries wherever the tree is copied,
# from build/, build/float/ and the graded builds below them (build/float/grade/build/).
CRITERION := third_party/criterion
ifneq ($(wildcard $(CRITERION)/.done),)
CRIT_CFLAGS := -I$(CRITERION)/include
CRIT_LIBS := -L$(CRITERION)/lib -Xlinker -rpath-link=$(CRITERION)/lib -Xlinker --disable-new-dtags \
             $(foreach up,.. ../.. ../../.. ../../../..,-Xlinker -rpath='$$ORIGIN/$(up)/$(CRITERION)/lib')
endif
CRIT_LIBS += -lcriterion

OBJ := $(BUILD)/obj
HARNESS := $(OBJ)/options.o $(OBJ)/input.o $(OBJ)/npy.o $(OBJ)/reference.o $(OBJ)/tolerance.o \
           $(OBJ)/median.o
# On the CPU model, model.o comes last on every link line: its guard follows the kernels' shared
# arrays (model/model.cc).
GPU_HARNESS := $(HARNESS) $(OBJ)/gpu.o $(if $(filter counters,$(SANITIZER)),$(OBJ)/counters.o) \
               $(if $(filter cpu,$(MODEL)),$(OBJ)/model.o)
# Stage 9 (step09_multi_gpu/: one process, every GPU, NCCL's all-reduce) has its own main and needs
# NCCL, which common/find_nccl.sh finds (NCCL_HOME= overrides). Without it, or in the float32
# build, step09 is left out of all, run and test, which say why.
ifeq ($(MODEL),cpu)
STEP09_WHY := stage 9 runs NCCL on GPUs, and the CPU model models one GPU without NCCL (make MODEL=gpu on a GPU machine).
else ifeq ($(TYPE),int)
FIND_NCCL := NCCL_HOME='$(NCCL_HOME)' bash common/find_nccl.sh # $(shell) sees no make argument
NCCL_FLAGS := $(shell $(FIND_NCCL) 2>/dev/null)
STEP09_WHY := $(if $(NCCL_FLAGS),,$(shell $(FIND_NCCL) 2>&1 >/dev/null))
else
STEP09_WHY := it is built in the int32 build (make step09); its all-reduce takes float32 at run time.
endif
STEP09 := $(if $(STEP09_WHY),,$(BUILD)/step09)
TEST_STEP09 := $(if $(STEP09_WHY),,$(BUILD)/test_step09)
# test_deterministic is step08's own: the GPU gives the bits its order of additions says.
TESTS := $(BUILD)/test_harness $(addprefix $(BUILD)/test_,$(SHORT)) $(BUILD)/test_all_stages \
         $(BUILD)/test_hostile $(BUILD)/test_deterministic $(TEST_STEP09)
# Deliberately wrong kernels the lessons warn about: built and run only by `make sanitize`.
BROKEN := $(BUILD)/broken/volatile_warp_unroll $(BUILD)/broken/barrier_in_branch

.PHONY: all help run test deps diff bench bench-model plot profile sanitize accuracy accuracy-tables slides \
        clean variants metrics figures grade mutants flush harris handout bench-step09 \
        step09 $(SHORT)
.DELETE_ON_ERROR:
.SECONDARY:

BINS := $(addprefix $(BUILD)/,$(SHORT))
all: $(BINS) $(STEP09) ## build every stage into build/stepNN (step09 where NCCL is found)
	@$(if $(STEP09_WHY),echo "make: step09 left out: $(STEP09_WHY)")

help: ## list the targets
	@echo "make targets (ARCH=$(ARCH), TYPE=$(TYPE); override with make ARCH=sm_90 TYPE=float ...):"
	@awk -F':.*## ' '/^[a-z%][^:=]*:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo "  step00..$(lastword $(SHORT)) build one stage: make step04 && build/step04 --help; step09 (NCCL): make step09"

$(SHORT) step09: %: $(BUILD)/%
bench-step09: $(BUILD)/step09 ## on GPUs: step09's all-reduce, 1 KiB..1 GiB (GPUS=G), into bench/<gpu>/allreduce.csv + .png
	@bash bench/allreduce.sh $(BUILD) $(GPUS)

run: all ## every stage on its default input, one summary table
	@bash common/run_all.sh $(BUILD) $(SHORT) $(if $(STEP09),step09)

# make test STEP="04 05": only those stages' tests and programs. STEP=5 is STEP=05, as for make diff.
TEST_STEPS := $(foreach s,$(STEP),step$(if $(filter 0 1 2 3 4 5 6 7 8 9,$(s)),0)$(s))
TEST_PROGS := $(if $(STEP),$(addprefix $(BUILD)/test_,$(filter $(TEST_STEPS),$(SHORT))) \
                $(if $(filter step08,$(TEST_STEPS)),$(BUILD)/test_deterministic) \
                $(if $(filter step09,$(TEST_STEPS)),$(TEST_STEP09)),$(TESTS))

test: deps ## build and run the Criterion tests, report per stage (STEP="04 05": those stages only)
	@$(if $(filter-out $(SHORT) step09,$(TEST_STEPS)),echo "make test: STEP must list stages \
	  from 00 to 09 (got '$(STEP)')." >&2; exit 2)
	@$(if $(STEP09_WHY),echo "make test: step09 left out: $(STEP09_WHY)")
	@MAKE='$(MAKE)' bash tests/run.sh $(BUILD) $(TEST_PROGS)

deps: ## install Criterion (as root, from Debian packages; and on the CPU model g++ and Boost.Context); VENDOR=1: copy Criterion into third_party/ for a machine without network
	@bash tests/deps.sh $(if $(filter cpu,$(MODEL)),--model) $(if $(VENDOR),--vendor)

diff: ## show what stage STEP=NN changed since stage NN-1 (make diff STEP=04)
	@test -n "$(STEP)" || { echo "usage: make diff STEP=NN, NN from 01 to $(patsubst step%,%,$(lastword $(SHORT)))" >&2; exit 2; }
	@bash common/diff.sh $(STEP)

# The GPU-only targets ask the driver for a GPU (NO_GPU) before they build anything: without one
# they say so in one sentence, at once, and exit 3; with MODEL=cpu on a GPU machine, exit 2.
have_gpu = $(if $(NO_GPU),echo "make $(1): no CUDA device ($(NO_GPU)): $(2)." >&2; exit 3,$(if \
  $(filter cpu,$(MODEL)),echo "make $(1): MODEL=cpu runs the CPU model$(,) whose times mean \
  nothing: $(2) (leave MODEL out$(,) or MODEL=gpu)." >&2; exit 2,:))

# make bench STEP="07 08": those stages only, their rows replaced in the CSV. float32 has its own CSV.
# Stages 02 and 03 take one block; their lessons are timed at scale by their segmented variants
# (bench/variants/stepNN_segmented.patch), which make bench runs with the stages.
AT_SCALE := $(filter %_segmented,$(VARIANTS))
BENCH_STAGES := $(if $(STEP),$(foreach s,$(TEST_STEPS),$(filter $(s) $(s)_segmented,$(GPU_SHORT) $(AT_SCALE))),\
                  $(GPU_SHORT) $(AT_SCALE))
bench: ## every GPU stage (STEP=NN: those) and stages 02-03 at scale against CUB and a copy, 2^10..2^30: CSV + plot
	@$(if $(filter-out $(GPU_SHORT),$(TEST_STEPS)),echo "make bench: STEP must list GPU stages (got '$(STEP)')." >&2; exit 2)
	@$(call have_gpu,bench,it times every stage on a CUDA GPU)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/bench_,$(BENCH_STAGES))
	@BENCH_MERGE=$(if $(STEP),1) BENCH_CSV=$(if $(filter float,$(TYPE)),results_float32.csv,results.csv) \
	  bash bench/run.sh $(BUILD) $(BENCH_STAGES)

VARIANT_STAGES := $(sort $(foreach v,$(filter-out $(AT_SCALE),$(VARIANTS)),$(firstword $(subst _, ,$(v))))) \
                  $(filter-out $(AT_SCALE),$(VARIANTS))
variants: ## the stages and each bench/variants/ patch against CUB, one run: bench/<gpu>/variants.csv (GPU)
	@$(call have_gpu,variants,it times every variant on a CUDA GPU)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/bench_,$(VARIANT_STAGES))
	@BENCH_CSV=variants.csv bash bench/run.sh $(BUILD) $(VARIANT_STAGES)

# What the L2 flush before each timed repeat costs the kernel after it: a flush that writes (memset)
# against one that reads (gpu_flush_l2), CUB, step07 and a copy, 2^20..2^28 (bench/flush.cu).
flush: ## on a GPU: memset flush vs read flush, same run: bench/<gpu>/flush.csv
	@$(call have_gpu,flush,it times CUB and step07 on a CUDA GPU)
	@$(MAKE) --no-print-directory $(BUILD)/bench_flush
	@BENCH_CSV=flush.csv bash bench/run.sh $(BUILD) flush

MODEL_BENCH := step01 step02_segmented step03_segmented $(filter-out step00 step01,$(GPU_SHORT))
bench-model: ## the CPU model's speed on one core: each stage at 2^24 and, with ThreadSanitizer, 2^16, against step00's loop: bench/cpu_model/model.csv (no GPU)
	@$(if $(filter cpu,$(MODEL)),,echo "make bench-model: it times the CPU model: run it with MODEL=cpu." >&2; exit 2)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/model_bench_,$(MODEL_BENCH))
	@$(MAKE) --no-print-directory SANITIZER=thread BUILD=$(BUILD)/thread \
	  $(addprefix $(BUILD)/thread/model_bench_,$(GPU_SHORT))
	@bash model/bench.sh $(BUILD)

harris: ## Harris's table from the newest bench/*/results.csv: the README's and lessons' blocks, and its plot (no GPU)
	@python3 bench/harris.py update README.md step*/README.md
	@csv=$$(ls -t bench/*/results.csv | head -n 1); py=$$(bash bench/python.sh) && \
	 $$py bench/harris.py png "$$csv" -o "$$(dirname "$$csv")/harris.png"

plot: ## redraw the benchmark plot into build/bandwidth.png, no GPU needed (CSV=..., PNG=...)
	@csv="$(CSV)"; [ -n "$$csv" ] || csv=$$(ls -t bench/*/results.csv 2>/dev/null | head -n 1); \
	 [ -n "$$csv" ] || { echo "make plot: no bench/*/results.csv yet: run make bench on a GPU." >&2; exit 2; }; \
	 py=$$(bash bench/python.sh) && mkdir -p $(BUILD) && \
	 $$py bench/plot.py "$$csv" --table -o $(or $(PNG),$(BUILD)/bandwidth.png)

PROFILED := $(or $(TEST_STEPS),step07)
profile: ## Nsight Compute on one stage (STEP=NN, N=elements)
	@$(if $(filter-out 1,$(words $(PROFILED)))$(filter-out $(GPU_SHORT),$(PROFILED)),echo "make profile: \
	  STEP must be one GPU stage from 01 to $(patsubst step%,%,$(lastword $(GPU_SHORT))) (got '$(STEP)')." >&2; exit 2)
	@$(call have_gpu,profile,Nsight Compute reads a CUDA GPU's counters)
	@$(MAKE) --no-print-directory $(BUILD)/$(PROFILED)
	@command -v ncu >/dev/null || { echo "make profile: ncu (Nsight Compute) was not found: it ships with the CUDA toolkit, e.g. /usr/local/cuda/bin/ncu; put its folder on PATH." >&2; exit 3; }
	ncu --clock-control none --profile-from-start off --set basic --section MemoryWorkloadAnalysis \
	    $(BUILD)/$(PROFILED) --n $(or $(N),67108864) --reps 1

metrics: ## Nsight Compute's counters of every GPU stage: metrics/<gpu>/metrics.csv and .md (GPU)
	@$(call have_gpu,metrics,Nsight Compute reads a CUDA GPU's counters)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/,$(GPU_SHORT) step04_interleaved)
	@bash metrics/run.sh $(BUILD) $(GPU_SHORT) step04_interleaved=$(BUILD)/step04_interleaved $(METRICS_EXTRA)

sanitize: ## compute-sanitizer on every GPU stage (on the CPU model: its memory, race and barrier checks); must catch tests/broken/
	@if [ "$(MODEL)" = cpu ]; then \
	  $(MAKE) --no-print-directory $(addprefix $(BUILD)/,$(GPU_SHORT)) $(BROKEN) && \
	  $(MAKE) --no-print-directory SANITIZER=thread BUILD=$(BUILD)/thread \
	    $(addprefix $(BUILD)/thread/,$(GPU_SHORT) $(patsubst $(BUILD)/%,%,$(BROKEN))) && \
	  bash model/sanitize.sh $(BUILD) $(GPU_SHORT); \
	else \
	  $(call have_gpu,sanitize,compute-sanitizer runs the stages on a CUDA GPU); \
	  $(MAKE) --no-print-directory $(addprefix $(BUILD)/,$(GPU_SHORT)) $(BROKEN) && \
	  COMPUTE_SANITIZER='$(COMPUTE_SANITIZER)' NVCC='$(NVCC)' bash tests/sanitize.sh $(BUILD) $(GPU_SHORT); \
	fi

# make grade STEP=05 SRC=path/to/reduce.cu: one student's file graded as stage 05;
# make grade STEP=05 SUBMISSIONS=dir/: every dir/<student>/reduce.cu and dir/<student>.cu (tests/grade.py).
GRADE_STEPS := $(if $(STEP),$(TEST_STEPS),$(GPU_SHORT))
grade: ## on a GPU: tests, compute-sanitizer, speed and the lesson's counters vs ours: build/grade/report.md (STEP=NN, SRC=file or SUBMISSIONS=dir)
	@$(if $(filter step09,$(GRADE_STEPS)),echo "make grade: stage 9 is graded by its own tests: make test STEP=09 \
	  (on every GPU the machine has)." >&2; exit 2)
	@$(if $(filter-out $(GPU_SHORT),$(GRADE_STEPS)),echo "make grade: STEP must list GPU stages from 01 to \
	  $(patsubst step%,%,$(lastword $(SHORT))) (got '$(STEP)'); stage 00 runs on the CPU: make test STEP=00." >&2; exit 2)
	@$(if $(SRC),$(if $(wildcard $(SRC)),,echo "make grade: SRC=$(SRC) is not a file." >&2; exit 2))
	@$(if $(SUBMISSIONS),$(if $(wildcard $(SUBMISSIONS)/.),,echo "make grade: SUBMISSIONS=$(SUBMISSIONS) is not a folder." >&2; exit 2))
	@$(if $(SRC)$(SUBMISSIONS),$(if $(filter 1,$(words $(GRADE_STEPS))),,echo "make grade: SRC= and \
	  SUBMISSIONS= grade one stage: give STEP=NN too (make grade STEP=05 SRC=path/to/reduce.cu)." >&2; exit 2))
	@$(call have_gpu,grade,grading runs the GPU tests$(,) compute-sanitizer and Nsight Compute on a CUDA GPU; nothing was graded)
	@$(MAKE) --no-print-directory deps
	@TYPE=$(TYPE) MAKE='$(MAKE)' python3 tests/grade.py $(BUILD) $(GRADE_STEPS) \
	  $(if $(SRC),--src $(abspath $(SRC))) $(if $(SUBMISSIONS),--submissions $(abspath $(SUBMISSIONS)))

mutants: ## on a GPU: make grade must reject each known-wrong kernel for its own reason (tests/mutants/, and each stage's predecessor handed in as it); on the CPU model: the model must catch each (model/mutants.sh)
	@if [ "$(MODEL)" = cpu ]; then \
	  $(MAKE) --no-print-directory deps && bash model/mutants.sh $(BUILD) $(MUTANTS); \
	else \
	  $(call have_gpu,mutants,they are graded on a CUDA GPU); \
	  $(MAKE) --no-print-directory deps && \
	  TYPE=$(TYPE) MAKE='$(MAKE)' python3 tests/grade.py --mutants $(BUILD) $(MUTANTS); \
	fi

accuracy: ## float32: each stage's sum against a double reference, spread over 20 runs (Markdown; GPU)
	@$(MAKE) --no-print-directory TYPE=float accuracy-tables

accuracy-tables: $(addprefix $(BUILD)/accuracy_,$(SHORT))
	@bash common/accuracy.sh $(BUILD) $(SHORT)

figures: ## draw each stage's thread-to-data mapping into figures/stepNN.png (figures/mapping.py)
	@python3 figures/mapping.py --png figures

slides: ## the lecture deck build/slides/reduction.pdf (stages 0-7) and appendix.pdf (8-9), pandoc + Beamer
	@bash slides/build.sh

handout: ## the students' starting point, no solutions: build/handout/reduction/ and its .tar.gz
	@bash common/handout.sh build/handout

clean: ## remove build/
	rm -rf build

# --- building -------------------------------------------------------------------------------
LINK = $(NVCC) -arch=$(ARCH) $^ -o $@
# Every object built before is built again when the flavor (or, on the model, the model) changes.
MODEL_DEPS := $(if $(filter cpu,$(MODEL)),model/cuda_runtime.h model/cuda_profiler_api.h model/cucc)
$(wildcard $(OBJ)/*.o): $(FLAVOR_FILE) $(MODEL_DEPS)
$(FLAVOR_FILE): ; # written when the Makefile is read, never by a rule

# The CPU model's runtime: never instrumented, whatever SANITIZER says (model/model.cc).
$(OBJ)/model.o: model/model.cc model/cuda_runtime.h | $(OBJ)
	$(CXX) $(CXXFLAGS) -g -Imodel -c $< -o $@
# The lessons' counters from the model, a first part (model/counters.cc; not yet read by make grade):
# CUDA_MODEL_COUNTERS=1 BUILD/counters/stepNN prints them.
$(OBJ)/counters.o: model/counters.cc model/cuda_runtime.h | $(OBJ)
	$(CXX) $(CXXFLAGS) -g -Imodel -c $< -o $@
# On the model, each stage's tests also run its program built with ThreadSanitizer (test_stage.c,
# data_race_free): BUILD/thread/stepNN, made by a make of its own; BUILD/counters/ likewise. (Two
# at once would build the same objects at once: a target that wants several makes them in one
# make, SANITIZER=thread BUILD=BUILD/thread, as sanitize and bench-model do.)
ifeq ($(MODEL)$(SANITIZER),cpuaddress)
$(BUILD)/thread/%: FORCE
	@$(MAKE) --no-print-directory SANITIZER=thread BUILD=$(BUILD)/thread $@
$(BUILD)/counters/%: FORCE
	@$(MAKE) --no-print-directory SANITIZER=counters BUILD=$(BUILD)/counters $@
$(addprefix $(BUILD)/test_,$(GPU_SHORT)): $(BUILD)/test_%: | $(BUILD)/thread/%
endif
.PHONY: FORCE
named = -DSTAGE_NAME='"$(call name,$*)"'# the program's stage: step04 -> "step04_smem"

$(OBJ)/%.o: common/%.c common/*.h | $(OBJ)
	$(CC) $(CFLAGS) -c $< -o $@

$(OBJ)/%.o: common/%.cu common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(OBJ)/reference.o: step00_cpu/reduce.c common/reduce.h | $(OBJ)
	$(CC) $(CFLAGS) -c $< -o $@

# A stage's own code: its kernels and reduce(). step00's loop is bound to the stage interface by
# common/cpu_stage.c.
$(OBJ)/stage_step00.o: common/cpu_stage.c common/reduce.h | $(OBJ)
	$(CC) $(CFLAGS) -c $< -o $@
$(OBJ)/stage_%.o: common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -c $(call src,$*) -o $@
$(foreach s,$(GPU_SHORT) $(VARIANTS),\
    $(eval $(OBJ)/stage_$(s).o $(OBJ)/depth_$(s).o: $(call src,$(s))))

# make accuracy only: the same code on a counting type, its depth twin. -DREDUCE_DEPTH makes elem_t
# a depth and renames reduce() to reduce_depth() (reduce.h, common/depth.h); measure_depth
# (depth.o) runs it. step00's C files compile as CUDA C++.
$(OBJ)/depth_step00.o: common/cpu_stage.c common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DREDUCE_DEPTH -x cu -c $< -o $@
$(OBJ)/reference_depth.o: step00_cpu/reduce.c common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DREDUCE_DEPTH -x cu -c $< -o $@
$(OBJ)/depth_%.o: common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DREDUCE_DEPTH -c $(call src,$*) -o $@

$(BUILD)/variants/%.cu: bench/variants/%.patch bench/variant.sh
	@mkdir -p $(@D)
	@bash bench/variant.sh $< $@

# A stage's program, benchmark and accuracy run: a common main, the stage's name compiled in.
$(OBJ)/main_%.o: common/main.c common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(named) -c $< -o $@
$(OBJ)/bench_%.o: common/bench.cu common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) $(named) -c $< -o $@
$(OBJ)/accuracy_%.o: common/accuracy.cu common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) $(named) -c $< -o $@
$(OBJ)/flush.o: bench/flush.cu common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DSTAGE_NAME='"$(call name,step07)"' -c $< -o $@

$(BUILD)/%: $(OBJ)/main_%.o $(OBJ)/stage_%.o $(GPU_HARNESS)
	$(LINK)
$(BUILD)/bench_%: $(OBJ)/bench_%.o $(OBJ)/stage_%.o $(GPU_HARNESS)
	$(LINK)
$(BUILD)/bench_flush: $(OBJ)/flush.o $(OBJ)/stage_step07.o $(GPU_HARNESS)
	$(LINK)
$(BUILD)/accuracy_%: $(OBJ)/accuracy_%.o $(OBJ)/stage_%.o $(OBJ)/depth_%.o $(OBJ)/depth.o \
                     $(OBJ)/reference_depth.o $(GPU_HARNESS)
	$(LINK)

$(BUILD)/broken/%: tests/broken/%.cu common/check.h $(if $(filter cpu,$(MODEL)),$(OBJ)/model.o)
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) $< $(filter %.o,$^) -o $@

# --- tests ----------------------------------------------------------------------------------
$(OBJ)/test_stage_%.o: tests/test_stage.c tests/*.h common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(CRIT_CFLAGS) -Itests $(named) -DBUILD_DIR='"$(BUILD)"' \
	    $(if $(filter cpu,$(MODEL)),-DCPU_MODEL -DSTAGE_LIST='"$(STAGES)"') -c $< -o $@

$(OBJ)/test_%.o: tests/test_%.c tests/*.h common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(CRIT_CFLAGS) -Itests -DBUILD_DIR='"$(BUILD)"' \
	    -DSTAGE_LIST='"$(STAGES)"' -c $< -o $@

# The counting type's own tests are C++ (Criterion supports it): depth.h is C++.
$(OBJ)/test_depth.o: tests/test_depth.cc common/depth.h | $(OBJ)
	$(CXX) $(CXXFLAGS) $(CRIT_CFLAGS) -Itests -c $< -o $@

$(BUILD)/test_harness: $(OBJ)/test_options.o $(OBJ)/test_npy.o $(OBJ)/test_reference.o \
                       $(OBJ)/test_tolerance.o $(OBJ)/test_depth.o $(HARNESS)
	$(LINK) $(CRIT_LIBS)
$(BUILD)/test_all_stages $(BUILD)/test_hostile: $(BUILD)/test_%: $(OBJ)/test_%.o \
                                                 $(OBJ)/stage_step00.o $(GPU_HARNESS)
	$(LINK) $(CRIT_LIBS)
$(BUILD)/test_deterministic: $(OBJ)/test_deterministic.o $(OBJ)/stage_step08.o $(GPU_HARNESS)
	$(LINK) $(CRIT_LIBS)
$(BUILD)/test_%: $(OBJ)/test_stage_%.o $(OBJ)/stage_%.o $(GPU_HARNESS)
	$(LINK) $(CRIT_LIBS)

# The CPU model's benchmark (model/bench.c, make bench-model): a stage's reduce() timed by the host.
$(OBJ)/model_bench_%.o: model/bench.c common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(named) -DSANITIZER='"$(SANITIZER)"' -c $< -o $@
$(BUILD)/model_bench_%: $(OBJ)/model_bench_%.o $(OBJ)/stage_%.o $(GPU_HARNESS)
	$(LINK)

# Stage 9: its own main, stage 8's kernel on each GPU, NCCL (NCCL_FLAGS, found above). Its files
# and a second copy of stage 8's are compiled with --default-stream per-thread (PTDS): stage 8's
# <<<>>> then goes to cudaStreamPerThread, the stream step09 gives NCCL (multi_gpu.cu, struct team).
# The harness (gpu.o) and stage_step08.o stay on the legacy default stream.
STEP09_SRC := step09_multi_gpu/multi_gpu.cu step09_multi_gpu/multi_gpu.h common/*.h
PTDS := $(NVCC) $(NVCCFLAGS) --default-stream per-thread
STEP09_CC := $(PTDS) -Istep09_multi_gpu $(filter -I%,$(NCCL_FLAGS))
$(OBJ)/stage_step08_ptds.o: $(call src,step08) common/*.h | $(OBJ)
	$(PTDS) -c $< -o $@
$(OBJ)/multi_gpu.o: $(STEP09_SRC) | $(OBJ)
	@test -n "$(NCCL_FLAGS)" || { echo "make: step09 cannot be built: $(STEP09_WHY)" >&2; exit 2; }
	$(STEP09_CC) -c $< -o $@
$(OBJ)/main_multi_gpu.o: step09_multi_gpu/main.cu $(STEP09_SRC) | $(OBJ)
	$(STEP09_CC) -c $< -o $@
$(BUILD)/step09: $(OBJ)/main_multi_gpu.o $(OBJ)/multi_gpu.o $(OBJ)/stage_step08_ptds.o $(GPU_HARNESS)
	$(LINK) $(filter-out -I%,$(NCCL_FLAGS))
$(OBJ)/test_multi_gpu.o: tests/test_multi_gpu.c step09_multi_gpu/multi_gpu.h tests/*.h common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(CRIT_CFLAGS) -Itests -Istep09_multi_gpu -c $< -o $@
$(BUILD)/test_step09: $(OBJ)/test_multi_gpu.o $(OBJ)/multi_gpu.o $(OBJ)/stage_step08_ptds.o \
                      $(GPU_HARNESS)
	$(LINK) $(filter-out -I%,$(NCCL_FLAGS)) $(CRIT_LIBS)

$(OBJ):
	mkdir -p $@
