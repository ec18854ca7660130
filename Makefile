# The two commands: `make demo` (compile and run the bundled model) and
# `make test` (all fast tests). Both do every set-up step on a fresh machine.
VENV    := .venv
PY      := $(VENV)/bin/python
BUILD   := build
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# pkg-config: the install-and-consume test builds a program with it;
# libonnx-testdata: ONNX's backend node tests (tests/e2e/test_onnx_backend.py)
APT_PKGS := protobuf-c-compiler libprotobuf-c-dev pkg-config libonnx-testdata
# scikit-build-core: `pip install -e . --no-build-isolation` (pyproject.toml);
# torchvision: the networks of tests/e2e/test_torchvision.py (tests/models/tv.py)
PY_PKGS  := numpy onnx==1.23.1 onnxruntime==1.30.0 onnxscript==0.7.2 \
            pytest torch==2.13.0 torchao==0.18.0 torchvision==0.28.0 scikit-learn \
            scikit-build-core

.PHONY: all setup build demo test test-slow unit e2e asan clean bench

all: build

$(BUILD)/.apt-stamp:
	@mkdir -p $(BUILD)
	@dpkg -s $(APT_PKGS) >/dev/null 2>&1 || \
	  ($(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS))
	@touch $@

$(VENV)/.stamp:
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(PY_PKGS)
	@touch $@

setup: $(BUILD)/.apt-stamp $(VENV)/.stamp

ONNX_PROTO = $(shell $(PY) -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "onnx.proto"))')

build: setup
	cmake -S . -B $(BUILD) -DONNX_PROTO=$(ONNX_PROTO) >/dev/null
	cmake --build $(BUILD) -j2

asan: setup
	cmake -S . -B $(BUILD)-asan -DCS_ASAN=ON -DONNX_PROTO=$(ONNX_PROTO) >/dev/null
	cmake --build $(BUILD)-asan -j2 --target cstatic

demo: build
	$(PY) examples/digits/demo.py

unit: build
	cd $(BUILD) && ctest --output-on-failure

e2e: build asan
	$(PY) -m pytest -q tests/e2e -m "not slow"

test: unit e2e

test-slow: build asan
	$(PY) -m pytest -q tests/e2e

# The peers `make bench` times beside cstatic: ExecuTorch 1.5.1 (its CPU
# wheel runs with torch 2.13.0; the constraints keep pip from pulling
# another torch or torchao).
BENCH_PKGS := executorch==1.5.1

$(VENV)/.bench-stamp: $(VENV)/.stamp bench/constraints.txt
	$(PY) -m pip install -q -c bench/constraints.txt $(BENCH_PKGS)
	@touch $@

bench: build $(VENV)/.bench-stamp
	$(PY) bench/run.py

clean:
	rm -rf $(BUILD) $(BUILD)-asan
