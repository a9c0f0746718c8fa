"""test_kvplan.py: the Python package against the same expected values as
the C tests (tests/check-api.c), each from hand arithmetic or a public
fact: KV bytes per token from config.json shapes, the generic pool with
every term given, errors with file:line:col and nothing printed, the JSON
records, pandas optional, handles shared by threads."""
import concurrent.futures
import json
import os
import pathlib
import struct
import subprocess

import pytest

import kvplan

# the checkout, for its example config.json, and the built kvplan command
# (both set by tests/cli-python.sh)
TOP = os.environ.get("KVPLAN_SOURCE_DIR")
CLI = os.environ.get("KVPLAN_CLI")


@pytest.fixture(scope="module")
def h100():
    return kvplan.GPU("h100-sxm")


# KV bytes per token on one GPU = 2 (K, V) x L x H_kv / tp x d_h x 2 B (bf16)
@pytest.mark.parametrize("model,tp,per_token", [
    ("llama-3.1-8b", 1, 2 * 32 * 8 * 128 * 2),        # 131,072
    ("llama-3.1-70b", 1, 2 * 80 * 8 * 128 * 2),       # 327,680
    ("llama-3.1-70b", 2, 2 * 80 * (8 // 2) * 128 * 2),  # 163,840
    ("qwen2.5-7b", 1, 2 * 28 * 4 * 128 * 2),          # 57,344
])
def test_kv_bytes(h100, model, tp, per_token):
    b = kvplan.budget(kvplan.Model(model), h100, tp=tp, context=4096, batch=3)
    assert b.kv_bytes_per_token == per_token
    assert b.kv_bytes == per_token * 4096 * 3   # exact KV of 3 sequences
    assert (b.context, b.batch, b.model, b.gpu, b.engine) == (4096, 3, model, "h100-sxm",
                                                               "generic")


def test_generic_terms():
    # pool = 80 GiB x 0.9 - 16 - 1 - 1 GiB = 77,309,411,328 - 19,327,352,832
    #      = 57,982,058,496 B; blocks of 16 x 131,072 B = 2 MiB: 27,648 blocks,
    #      442,368 tokens, 54 sequences of 8,192
    m = kvplan.Model("llama-3.1-8b")
    terms = dict(context=8192, utilization=0.9, gpu_memory_bytes=80 << 30,
                 weights_bytes=16 << 30, activation_bytes=1 << 30, overhead_bytes=1 << 30)
    b = kvplan.budget(m, None, batch=54, **terms)
    assert b.kv_pool_bytes == 80 * 2**30 * 9 // 10 - 18 * 2**30 == 57_982_058_496
    assert b.num_blocks == 57_982_058_496 // (16 * 131_072) == 27_648
    assert b.max_tokens == 27_648 * 16
    assert b.max_sequences == 27_648 * 16 // 8192 == 54
    assert b.fits and b.gpu == "custom"
    assert not kvplan.budget(m, None, batch=55, **terms).fits  # an answer, not an error
    # zero overhead is a value: 1 GiB / 2 MiB = 512 blocks more
    terms["overhead_bytes"] = 0
    assert kvplan.budget(m, None, batch=1, **terms).num_blocks == 27_648 + 512


def test_to_dict(h100):
    b = kvplan.budget(kvplan.Model("llama-3.1-8b"), h100, kvplan.Engine("vllm"), context=8192)
    d = b.to_dict()
    assert d["kv_bytes_per_token"] == 131_072 and d["engine"] == "vllm"
    assert set(d) >= {"max_sequences", "fits", "kv_pool_bytes", "max_sequences_low"}
    assert d["max_sequences_low"] <= d["max_sequences"] <= d["max_sequences_high"]


def test_records(h100):
    m, e = kvplan.Model("llama-3.1-8b"), kvplan.Engine("vllm")
    assert e.version  # the newest modelled
    rec = kvplan.budget_record(m, h100, e, context=8192)
    assert rec["kv_bytes_per_token"] == 131_072
    assert rec["schema_version"] >= 1 and rec["engine"] == "vllm"
    # the typed call and the record agree
    b = kvplan.budget(m, h100, e, context=8192)
    assert rec["max_sequences"] == b.max_sequences and rec["kv_pool_bytes"] == b.kv_pool_bytes
    p = kvplan.perf(m, h100, e, prompt=1024, output=128, batches=[1, 8])
    assert [r["batch"] for r in p.rows] == [1, 8]
    assert all(r["tpot_s"] > 0 for r in p.rows)
    assert p.to_dict()["prompt"] == 1024


def test_records_are_the_clis(h100):
    """The records are the command's --format json, less what only the
    command adds (its warnings, and budget's inverse answers)."""
    if not CLI or not os.access(CLI, os.X_OK):
        pytest.skip("KVPLAN_CLI not set")
    m, e = kvplan.Model("llama-3.1-8b"), kvplan.Engine("vllm")

    def cli(*args):
        return json.loads(subprocess.run([CLI, *args, "--model", "llama-3.1-8b", "--gpu",
                                          "h100-sxm", "--engine", "vllm", "--format", "json"],
                                         check=False, capture_output=True, text=True).stdout)

    want = cli("budget", "--context", "8192")
    for k in ("warnings", "max_context", "utilization_needed"):
        want.pop(k, None)
    assert kvplan.budget_record(m, h100, e, context=8192) == want
    want = cli("perf", "--prompt", "1024", "--output", "256", "--batch", "1,8")
    want.pop("warnings")
    assert kvplan.perf(m, h100, e, prompt=1024, output=256, batches=[1, 8]).to_dict() == want
    # the efficiencies, given and from a calibration file (kvplan's table)
    cal = os.path.join(os.environ.get("TMPDIR") or "/tmp", "kvplan-test-cal-%d.yaml" % os.getpid())
    with open(cal, "w") as f:
        f.write("calibration:\n  - gpu: h100-sxm\n    decode_bw_efficiency: 0.5\n"
                "    prefill_flops_efficiency: 0.25\n")
    try:
        for args, kw in ((["--decode-bw-efficiency", "0.6"], dict(decode_bw_efficiency=0.6)),
                         (["--calibration", cal], dict(calibration=cal)),
                         (["--calibration", cal, "--prefill-flops-efficiency", "0.4"],
                          dict(calibration=pathlib.Path(cal), prefill_flops_efficiency=0.4))):
            want = cli("perf", "--prompt", "1024", "--output", "256", "--batch", "1,8", *args)
            want.pop("warnings")
            got = kvplan.perf(m, h100, e, prompt=1024, output=256, batches=[1, 8], **kw)
            assert got.to_dict() == want, args
    finally:
        os.unlink(cal)
    want = cli("frag", "--workload", "chat", "--requests", "2000", "--block-sizes", "16,32")
    want.pop("warnings")
    got = kvplan.frag(m, h100, kvplan.Workload("chat"), e, requests=2000, block_sizes=[16, 32])
    assert got.to_dict() == want


@pytest.mark.skipif(not TOP, reason="needs the checkout's kvbench fixture")
def test_perf_two_calibrations(tmp_path):
    """--calibration twice as a sequence of two: an engine calibration
    (weights at 0.6, a fixed 1 ms a step) and a kvbench run of an H20
    (tests/data/good/kvbench-cuda-h20.yaml: decode figure 0.8, the KV read).
    llama-2-7b at 2,048 tokens on an H20 (4.0 TB/s) reads 13,476,831,232 B
    of weights (6,738,415,616 params x 2 B) and 2,048 x 524,288 =
    1,073,741,824 B of KV: 13,476,831,232 / 2.4e12 + 1,073,741,824 / 3.2e12
    = 5.615346e-3 + 3.355443e-4 = 5.950891e-3 s; two of one kind is an
    error."""
    kernel = os.path.join(TOP, "tests", "data", "good", "kvbench-cuda-h20.yaml")
    engine = tmp_path / "engine.yaml"
    engine.write_text("calibration:\n  - gpu: h20\n    decode_bw_efficiency: 0.6\n"
                      "    step_fixed_s: 0.001\n")
    m, h20 = kvplan.Model("llama-2-7b"), kvplan.GPU("h20")
    for cal in ((engine, kernel), (kernel, str(engine))):
        got = kvplan.perf(m, h20, prompt=2048, output=1, calibration=cal).to_dict()
        assert got["calibration"] == str(engine) and got["calibration_kernel"] == kernel
        assert got["kv_bw_efficiency"] == pytest.approx(0.8)
        assert got["rows"][0]["decode_memory_s"] == pytest.approx(
            13_476_831_232 / (4e12 * 0.6) + 1_073_741_824 / (4e12 * 0.8), rel=1e-9)
    with pytest.raises(kvplan.KvplanError):
        kvplan.perf(m, h20, prompt=2048, output=1, calibration=[kernel, kernel])


def test_size(h100):
    """The purchase search over two GPUs: the chosen configuration by hand
    (count = tp x replicas; cost/h = the given price x count; tokens/s =
    rate x mean output; $/Mtok = cost/h / (tokens/s x 3,600 / 1e6)), the
    record the CLI's (below), and cmd-size.c's refusals."""
    m, w, l4 = kvplan.Model("llama-3.1-8b"), kvplan.Workload("chat"), kvplan.GPU("l4")
    r = kvplan.size(m, [h100, l4], w, rate=4, ttft_s=1, tpot_s=0.05, tp=[1, 2],
                    prices=[2.5, 0.5])
    assert len(r.configs) == 2 * 2 and r.chosen is not None and r.chosen["meets"]
    c = r.chosen
    price = {"h100-sxm": 2.5, "l4": 0.5}[c["gpu"]]
    assert c["count"] == c["tp"] * c["replicas"]
    assert c["rate_per_replica"] == pytest.approx(4 / c["replicas"])
    assert c["cost_per_hour"] == pytest.approx(price * c["count"])
    assert c["tokens_per_s"] == pytest.approx(4 * r.record["output_mean"])
    assert c["cost_per_mtok"] == pytest.approx(c["cost_per_hour"] /
                                               (c["tokens_per_s"] * 3600 / 1e6))
    assert c["cost_basis"] == "given" and r.record["min_gpus"] == 1
    assert r.to_dict()["configs"][0] == c  # ranked: the chosen first
    for bad, fld in ((dict(tp=[0]), "tp"), (dict(cost="cloud:cheap"), "cost"),
                     (dict(pue=1.2), "pue"), (dict(kv_dtypes=["fp8", "fp8_e4m3"]), "kv_dtypes"),
                     (dict(percentile=100), "percentile")):
        with pytest.raises(kvplan.KvplanError) as ei:
            kvplan.size(m, [h100], w, rate=4, **bad)
        assert ei.value.field == fld
    with pytest.raises(kvplan.KvplanError) as ei:
        kvplan.size(m, [h100], w, disagg=[(1, 2)])  # chat has no rate: disagg needs one
    assert ei.value.field == "disagg"
    for searched in ("num_gpus", "max_num_seqs"):  # the search sets them: refused
        with pytest.raises(kvplan.KvplanError) as ei:
            kvplan.size(m, [h100], w, **{searched: 8})
        assert ei.value.field == searched


def test_size_is_the_clis(h100):
    """kvplan.size() is `kvplan size --format json` for the same inputs,
    field by field, less the command's warnings."""
    if not CLI or not os.access(CLI, os.X_OK):
        pytest.skip("KVPLAN_CLI not set")
    m, w, e = kvplan.Model("llama-3.1-8b"), kvplan.Workload("chat"), kvplan.Engine("vllm")
    l4 = kvplan.GPU("l4")
    cases = [
        (["--rate", "4", "--ttft", "1", "--tpot", "0.05", "--tp", "1,2"],
         dict(rate=4, ttft_s=1, tpot_s=0.05, tp=[1, 2])),
        (["--rate", "20", "--tpot", "0.02", "--tp", "1,2,4", "--kv-dtypes", "auto,fp8",
          "--pareto", "--cost", "own", "--years", "4", "--price", "l4=0.5"],
         dict(rate=20, tpot_s=0.02, tp=[1, 2, 4], kv_dtypes=["auto", "fp8"], pareto=True,
              cost="own", years=4, prices=[None, 0.5])),
        (["--users", "64", "--slo-percentile", "p90", "--ttft", "0.5", "--tp", "1",
          "--max-num-seqs", "0,16", "--latency-spread", "0.1"],
         dict(users=64, percentile=90, queue_percentile=True, ttft_s=0.5, tp=[1],
              max_num_seqs_caps=[0, 16], latency_spread=0.1)),
        (["--rate", "8", "--tp", "1", "--disagg", "1:1,1:2"],
         dict(rate=8, tp=[1], disagg=[(1, 1), (1, 2)])),
        (["--rate", "4", "--ttft", "1", "--tpot", "0.05", "--tp", "1", "--simulate", "2"],
         dict(rate=4, ttft_s=1, tpot_s=0.05, tp=[1], simulate=2)),
    ]
    for args, kw in cases:
        out = subprocess.run([CLI, "size", "--model", "llama-3.1-8b", "--workload", "chat",
                              "--gpus", "h100-sxm,l4", "--engine", "vllm", *args,
                              "--format", "json"],
                             check=False, capture_output=True, text=True).stdout
        want = json.loads(out)
        want.pop("warnings", None)
        got = kvplan.size(m, [h100, l4], w, e, **kw).to_dict()
        assert got.keys() == want.keys(), args
        for k in want:
            assert got[k] == want[k], (args, k)
    # emit (the engine's command in the record; with no engine given, the
    # one planned with) and a calibration of the one GPU searched
    h20 = kvplan.GPU("h20")
    cal = os.path.join(TOP, "tests", "data", "good", "kvbench-cuda-h20.yaml") if TOP else None
    cases = [
        (["--gpus", "h100-sxm,l4", "--rate", "4", "--tp", "1,2", "--emit", "vllm"],
         [h100, l4], None, dict(rate=4, tp=[1, 2], emit="vllm")),
        (["--gpus", "h100-sxm", "--rate", "4", "--tp", "1,2", "--kv-dtypes", "auto,fp8",
          "--engine", "vllm", "--emit", "sglang"],
         [h100], e, dict(rate=4, tp=[1, 2], kv_dtypes=["auto", "fp8"], emit="sglang")),
        (["--gpus", "h100-sxm", "--rate", "4", "--tp", "1,2", "--emit", "trtllm"],
         [h100], None, dict(rate=4, tp=[1, 2], emit="trtllm")),
    ]
    if cal:
        cases.append((["--gpu", "h20", "--rate", "4", "--calibration", cal, "--emit", "vllm"],
                      [h20], None, dict(rate=4, calibration=cal, emit="vllm")))
    for args, gs, eng, kw in cases:
        out = subprocess.run([CLI, "size", "--model", "llama-3.1-8b", "--workload", "chat",
                              *args, "--format", "json"],
                             check=False, capture_output=True, text=True).stdout
        want = json.loads(out)
        want.pop("warnings", None)
        assert "emit" in want, args
        got = kvplan.size(m, gs, w, eng, **kw).to_dict()
        assert got == want, args


def test_frag(h100):
    m, w = kvplan.Model("llama-3.1-8b"), kvplan.Workload("chat")
    f = kvplan.frag(m, h100, w, requests=2000, block_sizes=[16, 32])
    assert f.record["workload"] == "chat" and f.record["requests"] == 2000
    assert f.record["kv_bytes_per_token"] == 2 * 32 * 8 * 128 * 2
    assert f.rows and f.recommendation["recommended_block_size"] in (16, 32)
    # the same seed, the same answer; the handle is not changed by a run
    assert kvplan.frag(m, h100, w, requests=2000, block_sizes=[16, 32]) == f
    with pytest.raises(kvplan.KvplanError) as ei:
        kvplan.frag(m, h100, w, requests=100, block_sizes=[0])
    assert ei.value.field == "block_sizes"
    with pytest.raises(kvplan.KvplanError) as ei:
        kvplan.frag(m, h100, w, requests=100, step_time_s=0.01)  # no arrival rate
    assert ei.value.field == "step_time_s"


def test_hf_config(h100):
    if not TOP:
        pytest.skip("KVPLAN_SOURCE_DIR not set")
    # Qwen2.5-7B-Instruct's config.json: 28 layers, 4 KV heads, head dim
    # 3584 / 28 = 128, bf16: 2 x 28 x 4 x 128 x 2 = 57,344 B per token
    m = kvplan.Model(pathlib.Path(TOP, "examples", "Qwen2.5-7B-Instruct", "config.json"))
    assert kvplan.budget(m, h100, context=1024).kv_bytes_per_token == 57_344


def tiny_gguf() -> bytes:
    """A 2-layer "llama" GGUF header (ggml docs/gguf.md: "GGUF", uint32
    version, uint64 tensor and key counts, length-prefixed strings, typed
    values, tensor infos; little-endian), as tests/check-gguf.c writes it:
    hidden 64, 4 heads, 2 KV heads, context 2048, vocab 256."""
    def s(t):
        return struct.pack("<Q", len(t)) + t.encode()

    def u32(k, v):  # value type 4: UINT32
        return s(k) + struct.pack("<II", 4, v)

    def tensor(name, d0, d1, ggml_type):
        dims = struct.pack("<Q", d0) + (struct.pack("<Q", d1) if d1 else b"")
        return s(name) + struct.pack("<I", 2 if d1 else 1) + dims + struct.pack("<IQ", ggml_type, 0)

    kvs = [s("general.architecture") + struct.pack("<I", 8) + s("llama"),
           s("general.name") + struct.pack("<I", 8) + s("tiny-llama"),
           u32("llama.block_count", 2), u32("llama.embedding_length", 64),
           u32("llama.feed_forward_length", 128), u32("llama.context_length", 2048),
           u32("llama.attention.head_count", 4), u32("llama.attention.head_count_kv", 2),
           u32("llama.vocab_size", 256)]
    tensors = [tensor("token_embd.weight", 64, 256, 1), tensor("output.weight", 64, 256, 8),
               tensor("blk.0.attn_q.weight", 64, 64, 2),
               tensor("blk.0.ffn_up.weight", 256, 128, 14),
               tensor("blk.1.attn_q.weight", 64, 64, 30),
               tensor("blk.0.attn_norm.weight", 64, 0, 0)]
    return (b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) +
            b"".join(tensors))


def test_gguf(tmp_path, h100, capfd):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(tiny_gguf())
    m = kvplan.Model(path)
    assert (m.name, m.max_context) == ("tiny-llama", 2048)
    # KV: 2 layers x 2 (K, V) x 2 KV heads x head dim 64 / 4 = 16 x 2 B = 256 B
    assert kvplan.budget(m, h100, context=1024).kv_bytes_per_token == 2 * 2 * 2 * 16 * 2
    # every truncation is an error with the file's name, never a crash
    data = path.read_bytes()
    for n in range(0, len(data), 7):
        path.write_bytes(data[:n])
        with pytest.raises(kvplan.KvplanError) as ei:
            kvplan.Model(path)
        assert str(path) in str(ei.value)
    assert capfd.readouterr() == ("", "")


def test_profiles():
    assert "llama-3.1-8b" in kvplan.profiles("models")
    assert "h100-sxm" in kvplan.profiles("gpus")
    assert "vllm" in kvplan.profiles("engines")
    assert kvplan.version() == kvplan.__version__ and kvplan.version().count(".") == 2


def test_errors_located(tmp_path, capfd):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nnum_layers: 2\nnum_kv_heds: 8\n")
    with pytest.raises(kvplan.KvplanError) as ei:
        kvplan.Model(bad)
    e = ei.value
    assert str(e).startswith("%s:3:1: error: " % bad)
    assert (e.path, e.line, e.col, e.status_name) == (str(bad), 3, 1, "invalid value")
    with pytest.raises(kvplan.KvplanError, match="no profile named 'llama-9'") as ei:
        kvplan.Model("llama-9")
    assert ei.value.status_name == "not found"
    # the library prints nothing, on either stream
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.parametrize("options,field", [
    (dict(tp=3), "tp"),                  # 32 heads, 8 KV heads: not 3 ways
    (dict(dtype="int4"), "dtype"),       # a weights format, not a serving dtype
    (dict(kv_dtype="fp7"), "kv_dtype"),
    (dict(utilization=1.5), "utilization"),
])
def test_bad_options(h100, options, field):
    with pytest.raises(kvplan.KvplanError) as ei:
        kvplan.budget(kvplan.Model("llama-3.1-8b"), h100, **options)
    assert ei.value.field == field


def test_bad_engine():
    with pytest.raises(kvplan.KvplanError, match="unknown engine"):
        kvplan.Engine("tensorflow")
    with pytest.raises(kvplan.KvplanError):
        kvplan.budget(kvplan.Model("llama-3.1-8b"))  # no GPU and no gpu_memory_bytes


def test_sweep_list_and_frame():
    rows = kvplan.sweep(["llama-3.1-8b", "qwen2.5-7b"], ["h100-sxm", "a100-80gb"],
                        frame=False, context=8192)
    assert [(r.model, r.gpu) for r in rows] == [
        ("llama-3.1-8b", "h100-sxm"), ("llama-3.1-8b", "a100-80gb"),
        ("qwen2.5-7b", "h100-sxm"), ("qwen2.5-7b", "a100-80gb")]
    try:
        import pandas  # noqa: F401
    except ImportError:
        assert isinstance(kvplan.sweep(["llama-3.1-8b"], ["h100-sxm"]), list)
        return
    df = kvplan.sweep(["llama-3.1-8b"], ["h100-sxm"], context=8192)
    assert list(df["kv_bytes_per_token"]) == [131_072]


def test_threads_share_handles(h100):
    m, e = kvplan.Model("llama-3.1-8b"), kvplan.Engine("vllm")

    def seqs(k):
        return kvplan.budget(m, h100, e, context=1024 * (k + 1)).max_sequences

    one = [seqs(k) for k in range(32)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(seqs, range(32))) == one
