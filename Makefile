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
else ifeq ($(shell command -v $(NVCC) 2>/dev/null),)
ifneq ($(filter-out diff help slides figures plot clean deps,$(or $(MAKECMDGOALS),all)),)
$(error MODEL=gpu builds with nvcc, which is not here: install the CUDA toolkit (or set NVCC=), or build for the CPU model with MODEL=cpu)
endif
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

# The stages: the folders stepNN_name/ with a stage.ini, as tools/stages.py reads them for every
# script, tool and test (the tests get the list as STAGE_LIST): STAGES (those the harness runs),
# CPU_STAGE (the reference loop), PROGRAMS (a stage with its own main and rules: its build.mk),
# VARIANTS (stepNN_NAME: a stage with one change, stepNN_name/variants/NAME.patch; patch.V is its
# file), AT_SCALE (the variants that time a one-block stage's lesson), ROW_STAGES and
# ONE_BLOCK_STAGES (the speed-up table's rows; the stages another row times), FLAGSHIP (make
# profile's default, make flush's kernel), METRICS_ALSO, STAGE_TESTS (a stage's own test_NAME.c:
# test_src.T, test_stage.T) and follows.stepNN.
define newline


endef
$(eval $(subst |,$(newline),$(shell python3 tools/stages.py make || echo 'STAGES :=')))
ifeq ($(STAGES),)
$(error the stages could not be read: python3 tools/stages.py check says why (it needs Python 3))
endif
SHORT := $(foreach s,$(STAGES),$(firstword $(subst _, ,$(s))))# step00 step01 ...
CPU_SHORT := $(firstword $(subst _, ,$(CPU_STAGE)))# step00
GPU_SHORT := $(filter-out $(CPU_SHORT),$(SHORT))
long = $(filter $(1)_%,$(STAGES))# step04 -> step04_smem
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
# A stage's own tests (STAGE_TESTS: stage 8's test_deterministic, the bits its order gives) run
# with its make test STEP=NN. A program's build.mk (stage 9's: NCCL) adds to PROGRAM_BINS (built by
# all, run by run), PROGRAM_TESTS and TESTS_OF.stepNN (its tests, for make test STEP=NN), and sets
# WHY.stepNN (why it is left out here, if it is).
PROGRAM_BINS := # filled by the build.mk files below
PROGRAM_TESTS :=
PROGRAM_SHORT := $(foreach p,$(PROGRAMS),$(firstword $(subst _, ,$(p))))
$(foreach t,$(STAGE_TESTS),$(eval TESTS_OF.$(test_stage.$(t)) += $(BUILD)/$(t)))
include $(addsuffix /build.mk,$(PROGRAMS))
TESTS := $(BUILD)/test_harness $(addprefix $(BUILD)/test_,$(SHORT)) $(BUILD)/test_all_stages \
         $(BUILD)/test_hostile $(addprefix $(BUILD)/,$(STAGE_TESTS)) $(PROGRAM_TESTS)
# Deliberately wrong kernels the lessons warn about: built and run only by `make sanitize`.
BROKEN := $(BUILD)/broken/volatile_warp_unroll $(BUILD)/broken/barrier_in_branch

.PHONY: all help run test deps diff bench bench-model plot profile sanitize accuracy accuracy-tables slides \
        clean variants metrics figures grade mutants corpus flush harris handout $(SHORT)
.DELETE_ON_ERROR:
.SECONDARY:

BINS := $(addprefix $(BUILD)/,$(SHORT))
all: $(BINS) $(PROGRAM_BINS) ## build every stage into build/stepNN (step09 where NCCL is found)
	@$(foreach p,$(PROGRAM_SHORT),$(if $(WHY.$(p)),echo "make: $(p) left out: $(WHY.$(p))";))

help: ## list the targets
	@echo "make targets (ARCH=$(ARCH), TYPE=$(TYPE); override with make ARCH=sm_90 TYPE=float ...):"
	@awk -F':.*## ' '/^[a-z%][^:=]*:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo "  $(firstword $(SHORT))..$(lastword $(SHORT)) build one stage: make step04 && build/step04 --help$(foreach p,$(PROGRAM_SHORT),; $(p): make $(p))"

$(SHORT): %: $(BUILD)/%

run: ## every stage on its default input, one summary table (on the CPU model, installs what it needs first)
	@$(if $(filter cpu,$(MODEL)),bash tests/deps.sh --model-only)
	@$(MAKE) --no-print-directory all
	@bash tools/run_all.sh $(BUILD) $(SHORT) $(notdir $(PROGRAM_BINS))

# make test STEP="04 05": only those stages' tests and programs. STEP=5 is STEP=05, as for make diff.
TEST_STEPS := $(foreach s,$(STEP),step$(if $(filter 0 1 2 3 4 5 6 7 8 9,$(s)),0)$(s))
TEST_PROGS := $(if $(STEP),$(addprefix $(BUILD)/test_,$(filter $(TEST_STEPS),$(SHORT))) \
                $(foreach s,$(TEST_STEPS),$(TESTS_OF.$(s))),$(TESTS))

test: deps ## build and run the Criterion tests, report per stage (STEP="04 05": those stages only)
	@$(if $(filter-out $(SHORT) $(PROGRAM_SHORT),$(TEST_STEPS)),echo "make test: STEP must list \
	  stages from $(patsubst step%,%,$(firstword $(SHORT)) to $(lastword $(SHORT) $(PROGRAM_SHORT))) \
	  (got '$(STEP)')." >&2; exit 2)
	@$(foreach p,$(PROGRAM_SHORT),$(if $(WHY.$(p)),echo "make test: $(p) left out: $(WHY.$(p))";))
	@MAKE='$(MAKE)' bash tests/run.sh $(BUILD) $(TEST_PROGS)

deps: ## install Criterion (as root, from Debian packages; and on the CPU model g++, Boost.Context and libclang); WITH_NVCC=1: nvcc from PyPI too (the model's register check); VENDOR=1: copy Criterion, Boost.Context and bubblewrap into third_party/ for a machine without network
	@bash tests/deps.sh $(if $(SANDBOX),--sandbox) $(if $(filter cpu,$(MODEL)),--model) $(if $(WITH_NVCC),--nvcc) $(if $(VENDOR),--vendor)

diff: ## show what stage STEP=NN changed since stage NN-1 (make diff STEP=04); STEP=NNa: the first of two
	@test -n "$(STEP)" || { echo "usage: make diff STEP=NN, NN from 01 to $(patsubst step%,%,$(lastword $(SHORT))) (NNa: the first change of a stage whose lesson is two)" >&2; exit 2; }
	@bash tools/diff.sh $(STEP)

# The GPU-only targets ask the driver for a GPU (NO_GPU) before they build anything: without one
# they say so in one sentence, at once, and exit 3; with MODEL=cpu on a GPU machine, exit 2.
have_gpu = $(if $(NO_GPU),echo "make $(1): no CUDA device ($(NO_GPU)): $(2)." >&2; exit 3,$(if \
  $(filter cpu,$(MODEL)),echo "make $(1): MODEL=cpu runs the CPU model$(,) whose times mean \
  nothing: $(2) (leave MODEL out$(,) or MODEL=gpu)." >&2; exit 2,:))

# make bench STEP="07 08": those stages only, their rows replaced in the CSV. float32 has its own
# CSV. Stages 02 and 03 take one block; their lessons are timed at scale by their segmented variants
# (AT_SCALE: the variants their stage.ini names as their row), which make bench runs with the
# stages.
BENCH_STAGES := $(if $(STEP),$(foreach s,$(TEST_STEPS),$(filter $(s) $(s)_%,$(GPU_SHORT) $(AT_SCALE))),\
                  $(GPU_SHORT) $(AT_SCALE))
bench: ## every GPU stage (STEP=NN: those) and stages 02-03 at scale against CUB and a copy, 2^10..2^30: CSV + plot
	@$(if $(filter-out $(GPU_SHORT),$(TEST_STEPS)),echo "make bench: STEP must list GPU stages (got '$(STEP)')." >&2; exit 2)
	@$(call have_gpu,bench,it times every stage on a CUDA GPU)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/bench_,$(BENCH_STAGES))
	@BENCH_MERGE=$(if $(STEP),1) BENCH_CSV=$(if $(filter float,$(TYPE)),results_float32.csv,results.csv) \
	  bash tools/bench/run.sh $(BUILD) $(BENCH_STAGES)

VARIANT_STAGES := $(sort $(foreach v,$(filter-out $(AT_SCALE),$(VARIANTS)),$(firstword $(subst _, ,$(v))))) \
                  $(filter-out $(AT_SCALE),$(VARIANTS))
variants: ## the stages and each stepNN_name/variants/ patch against CUB, one run: results/<gpu>/variants.csv (GPU)
	@$(call have_gpu,variants,it times every variant on a CUDA GPU)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/bench_,$(VARIANT_STAGES))
	@BENCH_CSV=variants.csv bash tools/bench/run.sh $(BUILD) $(VARIANT_STAGES)

# What the L2 flush before each timed repeat costs the kernel after it: a flush that writes (memset)
# against one that reads (gpu_flush_l2), CUB, the FLAGSHIP stage and a copy, 2^20..2^28
# (tools/bench/flush.cu).
flush: ## on a GPU: memset flush vs read flush, same run: results/<gpu>/flush.csv
	@$(call have_gpu,flush,it times CUB and $(FLAGSHIP) on a CUDA GPU)
	@$(MAKE) --no-print-directory $(BUILD)/bench_flush
	@BENCH_CSV=flush.csv bash tools/bench/run.sh $(BUILD) flush

MODEL_BENCH := $(ROW_STAGES) $(ONE_BLOCK_STAGES)
bench-model: ## the CPU model's speed on one core: each stage at 2^24 and, with ThreadSanitizer, 2^16, against step00's loop: results/cpu_model/model.csv (no GPU)
	@$(if $(filter cpu,$(MODEL)),,echo "make bench-model: it times the CPU model: run it with MODEL=cpu." >&2; exit 2)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/model_bench_,$(MODEL_BENCH))
	@$(MAKE) --no-print-directory SANITIZER=thread BUILD=$(BUILD)/thread \
	  $(addprefix $(BUILD)/thread/model_bench_,$(GPU_SHORT))
	@bash model/bench.sh $(BUILD) "$(ROW_STAGES)" "$(ONE_BLOCK_STAGES)"

harris: ## Harris's table from the newest results/*/results.csv: the blocks of docs/benchmarks.md, README.md and the lessons, and its plot (no GPU)
	@python3 tools/bench/harris.py update README.md docs/benchmarks.md step*/README.md
	@csv=$$(ls -t results/*/results.csv | head -n 1); py=$$(bash tools/bench/python.sh) && \
	 $$py tools/bench/harris.py png "$$csv" -o "$$(dirname "$$csv")/harris.png"

plot: ## redraw the benchmark plot into build/bandwidth.png, no GPU needed (CSV=..., PNG=...)
	@csv="$(CSV)"; [ -n "$$csv" ] || csv=$$(ls -t results/*/results.csv 2>/dev/null | head -n 1); \
	 [ -n "$$csv" ] || { echo "make plot: no results/*/results.csv yet: run make bench on a GPU." >&2; exit 2; }; \
	 py=$$(bash tools/bench/python.sh) && mkdir -p $(BUILD) && \
	 $$py tools/bench/plot.py "$$csv" --table -o $(or $(PNG),$(BUILD)/bandwidth.png)

PROFILED := $(or $(TEST_STEPS),$(FLAGSHIP))
profile: ## Nsight Compute on one stage (STEP=NN, N=elements)
	@$(if $(filter-out 1,$(words $(PROFILED)))$(filter-out $(GPU_SHORT),$(PROFILED)),echo "make profile: \
	  STEP must be one GPU stage from 01 to $(patsubst step%,%,$(lastword $(GPU_SHORT))) (got '$(STEP)')." >&2; exit 2)
	@$(call have_gpu,profile,Nsight Compute reads a CUDA GPU's counters)
	@$(MAKE) --no-print-directory $(BUILD)/$(PROFILED)
	@command -v ncu >/dev/null || { echo "make profile: ncu (Nsight Compute) was not found: it ships with the CUDA toolkit, e.g. /usr/local/cuda/bin/ncu; put its folder on PATH." >&2; exit 3; }
	ncu --clock-control none --profile-from-start off --set basic --section MemoryWorkloadAnalysis \
	    $(BUILD)/$(PROFILED) --n $(or $(N),67108864) --reps 1

metrics: ## Nsight Compute's counters of every GPU stage: results/<gpu>/metrics.csv and .md (GPU)
	@$(call have_gpu,metrics,Nsight Compute reads a CUDA GPU's counters)
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/,$(GPU_SHORT) $(METRICS_ALSO))
	@bash tools/metrics/run.sh $(BUILD) $(GPU_SHORT) $(foreach v,$(METRICS_ALSO),$(v)=$(BUILD)/$(v)) $(METRICS_EXTRA)

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
# make grade STEP=05 SUBMISSIONS=dir/: every dir/<student>/reduce.cu and dir/<student>.cu, and
# STEP="05 06" SUBMISSIONS=dir/: every dir/<student>/stepNN_name/reduce.cu (GitHub Classroom
# repositories) as stage NN (tests/grade.py). On a GPU machine, on every GPU; without one
# (MODEL=cpu), on the CPU model, the speed left to a GPU.
GRADE_STEPS := $(if $(STEP),$(TEST_STEPS),$(GPU_SHORT))
grade: ## tests, sanitizers, speed and the lesson's counters vs ours, partial credit: build/grade/report.md (STEP=NN, SRC=file or SUBMISSIONS=dir; without a GPU on the CPU model, speed left out)
	@$(foreach p,$(filter $(PROGRAM_SHORT),$(GRADE_STEPS)),echo "make grade: stage $(patsubst 0%,%,$(p:step%=%)) is a program \
	  of its own, graded by its own tests: make test STEP=$(p:step%=%) (on every GPU the machine has)." >&2; exit 2;)
	@$(if $(filter-out $(GPU_SHORT),$(GRADE_STEPS)),echo "make grade: STEP must list GPU stages from 01 to \
	  $(patsubst step%,%,$(lastword $(SHORT))) (got '$(STEP)'); stage 00 runs on the CPU: make test STEP=00." >&2; exit 2)
	@$(if $(SRC),$(if $(wildcard $(SRC)),,echo "make grade: SRC=$(SRC) is not a file." >&2; exit 2))
	@$(if $(SUBMISSIONS),$(if $(wildcard $(SUBMISSIONS)/.),,echo "make grade: SUBMISSIONS=$(SUBMISSIONS) is not a folder." >&2; exit 2))
	@$(if $(SRC)$(SUBMISSIONS),$(if $(STEP),,echo "make grade: SRC= and SUBMISSIONS= need the \
	  stage: give STEP=NN too (make grade STEP=05 SRC=path/to/reduce.cu)." >&2; exit 2))
	@$(if $(SRC),$(if $(filter 1,$(words $(GRADE_STEPS))),,echo "make grade: SRC= grades one \
	  stage: give one STEP=NN." >&2; exit 2))
	@$(MAKE) --no-print-directory deps SANDBOX=1
	@TYPE=$(TYPE) MAKE='$(MAKE)' python3 tests/grade.py $(BUILD) $(GRADE_STEPS) \
	  $(if $(SRC),--src $(abspath $(SRC))) $(if $(SUBMISSIONS),--submissions $(abspath $(SUBMISSIONS)))

# make autograder STEP=05: a Gradescope autograder that runs make grade STEP=05 on the CPU model
# (tools/autograder/: its setup.sh and run_autograder, and this course, solutions included).
.PHONY: autograder
autograder: ## Gradescope's autograder of stage STEP=NN: build/autograder/stepNN/autograder.zip
	@bash tools/autograder/build.sh "$(STEP)"

mutants: ## on a GPU: the known submissions (stepNN_name/mutants/, each stage's predecessor and own file, tests/class/) graded as one class, each for its known fate; on the CPU model: the model must catch each mutant (model/mutants.sh)
	@if [ "$(MODEL)" = cpu ]; then \
	  $(MAKE) --no-print-directory deps $(addprefix $(BUILD)/,$(GPU_SHORT)) \
	    $(addprefix $(BUILD)/thread/,$(GPU_SHORT)) && $(CORPUS_ENV) bash model/mutants.sh $(BUILD) $(MUTANTS); \
	else \
	  $(call have_gpu,mutants,they are graded on a CUDA GPU); \
	  $(MAKE) --no-print-directory deps SANDBOX=1 && \
	  TYPE=$(TYPE) MAKE='$(MAKE)' python3 tests/grade.py --mutants $(BUILD) $(MUTANTS); \
	fi

# make corpus: tests/corpus/*.cu, each a whole stage file with the verdict it must get (its opening
# comment): on the CPU model its AddressSanitizer and ThreadSanitizer builds at several sizes and
# schedules, on a GPU nvcc, the sums and compute-sanitizer (tests/corpus.py). FILES=name...: those.
CORPUS_FLOAT := $(shell grep -l '^ \* Type: float' tests/corpus/*.cu 2>/dev/null)
# How tests/corpus.py builds a file as a stage: the compiler, its flags, the harness's objects.
CORPUS_ENV = CORPUS_NVCC='$(if $(filter cpu,$(MODEL)),bash model/cucc,$(NVCC))' \
  CORPUS_FLAGS='$(filter-out -DREDUCE_FLOAT,$(NVCCFLAGS))' CORPUS_ARCH='-arch=$(ARCH)' \
  CORPUS_HARNESS='$(notdir $(filter-out $(OBJ)/counters.o,$(GPU_HARNESS)))'
corpus: ## tests/corpus/: right files must sum right, wrong ones be caught for their reason (the CPU model; on a GPU machine, the GPU): BUILD/corpus/corpus.md
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(addprefix $(BUILD)/,$(GPU_SHORT)) \
	  $(if $(filter cpu,$(MODEL)),$(addprefix $(BUILD)/thread/,$(GPU_SHORT)))
	@$(if $(CORPUS_FLOAT),$(MAKE) --no-print-directory TYPE=float BUILD=$(BUILD)/float \
	  $(addprefix $(BUILD)/float/,$(GPU_SHORT)) \
	  $(if $(filter cpu,$(MODEL)),$(addprefix $(BUILD)/float/thread/,$(GPU_SHORT))))
	@$(CORPUS_ENV) python3 tests/corpus.py $(if $(filter cpu,$(MODEL)),model,gpu) \
	  $(patsubst %/float,%,$(BUILD)) $(FILES)

accuracy: ## float32: each stage's sum against a double reference, spread over 20 runs (Markdown; GPU)
	@$(MAKE) --no-print-directory TYPE=float accuracy-tables

accuracy-tables: $(addprefix $(BUILD)/accuracy_,$(SHORT))
	@bash tools/accuracy.sh $(BUILD) $(SHORT)

figures: ## draw each stage's thread-to-data mapping into stepNN_name/figure.png (tools/figures/mapping.py)
	@python3 tools/figures/mapping.py --png

slides: ## the lecture deck build/slides/reduction.pdf (stages 0-7) and appendix.pdf (8-9), pandoc + Beamer
	@bash slides/build.sh

handout: ## the students' starting point, no solutions: build/handout/reduction/ and its .tar.gz
	@bash tools/handout.sh build/handout

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

$(OBJ)/reference.o: $(CPU_STAGE)/reduce.c common/reduce.h | $(OBJ)
	$(CC) $(CFLAGS) -c $< -o $@

# A stage's own code: its kernels and reduce(). The CPU stage's loop is bound to the stage
# interface by common/cpu_stage.c.
$(OBJ)/stage_$(CPU_SHORT).o: common/cpu_stage.c common/reduce.h | $(OBJ)
	$(CC) $(CFLAGS) -c $< -o $@
$(OBJ)/stage_%.o: common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -c $(call src,$*) -o $@
$(foreach s,$(GPU_SHORT) $(VARIANTS),\
    $(eval $(OBJ)/stage_$(s).o $(OBJ)/depth_$(s).o: $(call src,$(s))))

# make accuracy only: the same code on a counting type, its depth twin. -DREDUCE_DEPTH makes elem_t
# a depth and renames reduce() to reduce_depth() (reduce.h, common/depth.h); measure_depth
# (depth.o) runs it. step00's C files compile as CUDA C++.
$(OBJ)/depth_$(CPU_SHORT).o: common/cpu_stage.c common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DREDUCE_DEPTH -x cu -c $< -o $@
$(OBJ)/reference_depth.o: $(CPU_STAGE)/reduce.c common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DREDUCE_DEPTH -x cu -c $< -o $@
$(OBJ)/depth_%.o: common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DREDUCE_DEPTH -c $(call src,$*) -o $@

# A variant's file: its stage's reduce.cu with the patch applied (tools/bench/variant.sh).
$(foreach v,$(VARIANTS),$(eval $(BUILD)/variants/$(v).cu: $(patch.$(v)) tools/bench/variant.sh ; \
  @mkdir -p $$(@D) && bash tools/bench/variant.sh $$< $$@))

# A stage's program, benchmark and accuracy run: a common main, the stage's name compiled in.
$(OBJ)/main_%.o: common/main.c common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(named) -c $< -o $@
$(OBJ)/bench_%.o: common/bench.cu common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) $(named) -c $< -o $@
$(OBJ)/accuracy_%.o: common/accuracy.cu common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) $(named) -c $< -o $@
$(OBJ)/flush.o: tools/bench/flush.cu common/*.h | $(OBJ)
	$(NVCC) $(NVCCFLAGS) -DSTAGE_NAME='"$(call name,$(FLAGSHIP))"' -c $< -o $@

$(BUILD)/%: $(OBJ)/main_%.o $(OBJ)/stage_%.o $(GPU_HARNESS)
	$(LINK)
$(BUILD)/bench_%: $(OBJ)/bench_%.o $(OBJ)/stage_%.o $(GPU_HARNESS)
	$(LINK)
$(BUILD)/bench_flush: $(OBJ)/flush.o $(OBJ)/stage_$(FLAGSHIP).o $(GPU_HARNESS)
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
                                                 $(OBJ)/stage_$(CPU_SHORT).o $(GPU_HARNESS)
	$(LINK) $(CRIT_LIBS)
# A stage's own tests (stepNN_name/test_NAME.c), linked with its code.
define stage_test
$(OBJ)/$(1).o: $(test_src.$(1)) tests/*.h common/*.h | $(OBJ)
	$$(CC) $$(CFLAGS) $$(CRIT_CFLAGS) -Itests -DBUILD_DIR='"$$(BUILD)"' \
	    $$(if $$(filter cpu,$$(MODEL)),-DCPU_MODEL) -c $$< -o $$@
$(BUILD)/$(1): $(OBJ)/$(1).o $(OBJ)/stage_$(test_stage.$(1)).o $$(GPU_HARNESS)
	$$(LINK) $$(CRIT_LIBS)
endef
$(foreach t,$(STAGE_TESTS),$(eval $(call stage_test,$(t))))
# huge.o: the inputs past 2^31 and 2^32 elements, made and summed on the device (common/huge.cu).
$(BUILD)/test_%: $(OBJ)/test_stage_%.o $(OBJ)/stage_%.o $(OBJ)/huge.o $(GPU_HARNESS)
	$(LINK) $(CRIT_LIBS)

# The CPU model's benchmark (model/bench.c, make bench-model): a stage's reduce() timed by the host.
$(OBJ)/model_bench_%.o: model/bench.c common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(named) -DSANITIZER='"$(SANITIZER)"' -c $< -o $@
$(BUILD)/model_bench_%: $(OBJ)/model_bench_%.o $(OBJ)/stage_%.o $(GPU_HARNESS)
	$(LINK)

$(OBJ):
	mkdir -p $@
