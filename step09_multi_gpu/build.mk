# Stage 9's Makefile rules (the Makefile includes the build.mk of each stage of kind = program):
# one process, every GPU, NCCL's all-reduce. It has its own main and needs NCCL, which
# tools/find_nccl.sh finds (NCCL_HOME= overrides). Without it, on the CPU model, or in the float32
# build, step09 is left out of all, run and test, which say why.
ifeq ($(MODEL),cpu)
STEP09_WHY := stage 9 runs NCCL on GPUs, and the CPU model models one GPU without NCCL (make MODEL=gpu on a GPU machine).
else ifeq ($(TYPE),int)
FIND_NCCL := NCCL_HOME='$(NCCL_HOME)' bash tools/find_nccl.sh # $(shell) sees no make argument
NCCL_FLAGS := $(shell $(FIND_NCCL) 2>/dev/null)
STEP09_WHY := $(if $(NCCL_FLAGS),,$(shell $(FIND_NCCL) 2>&1 >/dev/null))
else
STEP09_WHY := it is built in the int32 build (make step09); its all-reduce takes float32 at run time.
endif
STEP09 := $(if $(STEP09_WHY),,$(BUILD)/step09)
TEST_STEP09 := $(if $(STEP09_WHY),,$(BUILD)/test_step09)
PROGRAM_BINS += $(STEP09)
PROGRAM_TESTS += $(TEST_STEP09)
WHY.step09 := $(STEP09_WHY)
TESTS_OF.step09 += $(TEST_STEP09)

.PHONY: step09 bench-step09
step09: $(BUILD)/step09
bench-step09: $(BUILD)/step09 ## on GPUs: step09's all-reduce, 1 KiB..1 GiB (GPUS=G), into results/<gpu>/allreduce.csv + .png
	@bash step09_multi_gpu/allreduce.sh $(BUILD) $(GPUS)

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
$(OBJ)/test_multi_gpu.o: step09_multi_gpu/test_multi_gpu.c step09_multi_gpu/multi_gpu.h tests/*.h common/*.h | $(OBJ)
	$(CC) $(CFLAGS) $(CRIT_CFLAGS) -Itests -Istep09_multi_gpu -c $< -o $@
$(BUILD)/test_step09: $(OBJ)/test_multi_gpu.o $(OBJ)/multi_gpu.o $(OBJ)/stage_step08_ptds.o \
                      $(GPU_HARNESS)
	$(LINK) $(filter-out -I%,$(NCCL_FLAGS)) $(CRIT_LIBS)

