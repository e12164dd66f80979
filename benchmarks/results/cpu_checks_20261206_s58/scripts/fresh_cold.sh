rm -rf /tmp/fresh /tmp/fresh_venv /tmp/cold_caches2 && mkdir -p /tmp/cold_caches2
export TRITON_CACHE_DIR=/tmp/cold_caches2/triton TORCHINDUCTOR_CACHE_DIR=/tmp/cold_caches2/inductor
git clone -q /work/main /tmp/fresh
python3 -m venv /tmp/fresh_venv
. /tmp/fresh_venv/bin/activate
cd /tmp/fresh
git log -1 --format=%h
bash -c "$(sed -n 2p README.md)"
echo "rc demo=$?"
bash -c "$(sed -n 3p README.md)"
echo "rc tests=$?"
