rm -rf /tmp/ci /tmp/cold_caches && mkdir -p /tmp/cold_caches
export TRITON_CACHE_DIR=/tmp/cold_caches/triton TORCHINDUCTOR_CACHE_DIR=/tmp/cold_caches/inductor
git clone -q /work/main /tmp/ci/repo && cd /tmp/ci/repo && git log -1 --format=%h && python3 -m venv /tmp/ci/venv && . /tmp/ci/venv/bin/activate && bash .ci/run; echo "rc $?"
