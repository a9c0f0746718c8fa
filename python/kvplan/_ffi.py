"""_ffi.py: the C library of the package (_libkvplan*.so, include/kvplan.h)
through ctypes: the structs as the header lays them out, each function's
argument and result types.  Nothing here is public; kvplan/__init__.py is.

The header's ABI rule is followed: every options and result struct opens
with its size, set here to ctypes.sizeof of the struct below.
"""
import ctypes
import glob
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _profiles_env() -> None:
    """The built-in profiles travel with the package (setup.py copies them
    to kvplan/profiles/): searched after the user's $KVPLAN_PROFILES, as the
    installed data directory is for the CLI."""
    mine = os.path.join(_HERE, "profiles")
    cur = os.environ.get("KVPLAN_PROFILES")
    if not cur:
        os.environ["KVPLAN_PROFILES"] = mine
    elif mine not in cur.split(":"):
        os.environ["KVPLAN_PROFILES"] = cur + ":" + mine


def _load() -> ctypes.CDLL:
    found = sorted(glob.glob(os.path.join(_HERE, "_libkvplan*.so")) +
                   glob.glob(os.path.join(_HERE, "_libkvplan*.pyd")) +
                   glob.glob(os.path.join(_HERE, "_libkvplan*.dylib")))
    if not found:
        raise ImportError("kvplan: the compiled library (_libkvplan*.so) is missing from %s; "
                          "install the package with `pip install ./python`" % _HERE)
    return ctypes.CDLL(found[0])


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int),
                ("message", ctypes.c_char * 1400),
                ("path", ctypes.c_char * 512),
                ("line", ctypes.c_int),
                ("col", ctypes.c_int),
                ("field", ctypes.c_char * 128)]


class BudgetOpts(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("tp", ctypes.c_uint32), ("pp", ctypes.c_uint32),
                ("dp", ctypes.c_uint32), ("ep", ctypes.c_uint32),
                ("num_gpus", ctypes.c_uint32),
                ("context", ctypes.c_uint64), ("batch", ctypes.c_uint64),
                ("utilization", ctypes.c_double),
                ("block_size", ctypes.c_uint32), ("max_num_seqs", ctypes.c_uint32),
                ("max_batched_tokens", ctypes.c_uint64),
                ("dtype", ctypes.c_char_p), ("kv_dtype", ctypes.c_char_p),
                ("disable_hybrid_kv", ctypes.c_int),
                ("set", ctypes.c_uint32),
                ("gpu_memory_bytes", ctypes.c_uint64), ("weights_bytes", ctypes.c_uint64),
                ("activation_bytes", ctypes.c_uint64), ("overhead_bytes", ctypes.c_uint64)]


SET_GPU_MEMORY, SET_WEIGHTS, SET_ACTIVATION, SET_OVERHEAD = 1, 2, 4, 8


class BudgetResult(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("fits", ctypes.c_int), ("weights_fit", ctypes.c_int),
                ("block_size", ctypes.c_uint32),
                ("context", ctypes.c_uint64), ("batch", ctypes.c_uint64),
                ("kv_bytes_per_token", ctypes.c_uint64),
                ("kv_bytes_per_sequence", ctypes.c_uint64),
                ("kv_bytes", ctypes.c_uint64),
                ("gpu_memory_bytes", ctypes.c_uint64), ("usable_bytes", ctypes.c_uint64),
                ("weights_bytes", ctypes.c_uint64), ("activation_bytes", ctypes.c_uint64),
                ("overhead_bytes", ctypes.c_uint64), ("kv_pool_bytes", ctypes.c_uint64),
                ("num_blocks", ctypes.c_uint64), ("max_tokens", ctypes.c_uint64),
                ("max_sequences", ctypes.c_uint64),
                ("max_sequences_low", ctypes.c_uint64), ("max_sequences_high", ctypes.c_uint64)]


class PerfOpts(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("prompt", ctypes.c_uint64), ("output", ctypes.c_uint64),
                ("batches", ctypes.POINTER(ctypes.c_uint64)),
                ("nbatch", ctypes.c_size_t),
                ("decode_bw_efficiency", ctypes.c_double),
                ("prefill_flops_efficiency", ctypes.c_double),
                ("calibration", ctypes.c_char_p), ("calibration_kernel", ctypes.c_char_p)]


class FragOpts(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("max_len", ctypes.c_uint64), ("requests", ctypes.c_uint64),
                ("seed", ctypes.c_uint64), ("warmup", ctypes.c_int64),
                ("block_sizes", ctypes.POINTER(ctypes.c_uint32)),
                ("nblock", ctypes.c_size_t),
                ("arrival_rate", ctypes.c_double), ("step_time_s", ctypes.c_double)]


class SizeOpts(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("rate", ctypes.c_double), ("users", ctypes.c_uint64),
                ("ttft_s", ctypes.c_double), ("tpot_s", ctypes.c_double),
                ("percentile", ctypes.c_double), ("queue_percentile", ctypes.c_int),
                ("tp", ctypes.POINTER(ctypes.c_uint32)), ("ntp", ctypes.c_size_t),
                ("pp", ctypes.POINTER(ctypes.c_uint32)), ("dp", ctypes.POINTER(ctypes.c_uint32)),
                ("ep", ctypes.POINTER(ctypes.c_uint32)),
                ("npp", ctypes.c_size_t), ("ndp", ctypes.c_size_t), ("nep", ctypes.c_size_t),
                ("kv_dtypes", ctypes.POINTER(ctypes.c_char_p)), ("nkv_dtypes", ctypes.c_size_t),
                ("max_num_seqs", ctypes.POINTER(ctypes.c_uint64)),
                ("nmax_num_seqs", ctypes.c_size_t),
                ("disagg", ctypes.POINTER(ctypes.c_uint32 * 2)), ("ndisagg", ctypes.c_size_t),
                ("prices", ctypes.POINTER(ctypes.c_double)),
                ("cost", ctypes.c_char_p),
                ("years", ctypes.c_double), ("power_usd_per_kwh", ctypes.c_double),
                ("pue", ctypes.c_double), ("cost_utilization", ctypes.c_double),
                ("max_replicas", ctypes.c_uint32),
                ("decode_bw_efficiency", ctypes.c_double),
                ("prefill_flops_efficiency", ctypes.c_double),
                ("latency_spread", ctypes.c_double),
                ("simulate", ctypes.c_uint32), ("pareto_only", ctypes.c_int),
                ("emit", ctypes.c_char_p), ("calibration", ctypes.c_char_p),
                ("calibration_kernel", ctypes.c_char_p)]


_profiles_env()
lib = _load()

_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_err = ctypes.POINTER(Error)
_str_out = ctypes.POINTER(ctypes.c_void_p)  # char **, freed with kvplan_free

_SIGNATURES = {
    "kvplan_version": (ctypes.c_char_p, []),
    "kvplan_status_str": (ctypes.c_char_p, [ctypes.c_int]),
    "kvplan_free": (None, [ctypes.c_void_p]),
    "kvplan_model_load": (ctypes.c_int, [ctypes.c_char_p, _pp, _err]),
    "kvplan_model_free": (None, [_p]),
    "kvplan_model_name": (ctypes.c_char_p, [_p]),
    "kvplan_model_max_context": (ctypes.c_uint64, [_p]),
    "kvplan_model_warning_count": (ctypes.c_size_t, [_p]),
    "kvplan_model_warning": (ctypes.c_char_p, [_p, ctypes.c_size_t]),
    "kvplan_gpu_load": (ctypes.c_int, [ctypes.c_char_p, _pp, _err]),
    "kvplan_gpu_free": (None, [_p]),
    "kvplan_gpu_name": (ctypes.c_char_p, [_p]),
    "kvplan_gpu_memory_bytes": (ctypes.c_uint64, [_p]),
    "kvplan_engine_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, _pp, _err]),
    "kvplan_engine_free": (None, [_p]),
    "kvplan_engine_name": (ctypes.c_char_p, [_p]),
    "kvplan_engine_version": (ctypes.c_char_p, [_p]),
    "kvplan_budget_opts_init": (None, [ctypes.POINTER(BudgetOpts)]),
    "kvplan_budget": (ctypes.c_int, [_p, _p, _p, ctypes.POINTER(BudgetOpts),
                                     ctypes.POINTER(BudgetResult), _err]),
    "kvplan_budget_json": (ctypes.c_int, [_p, _p, _p, ctypes.POINTER(BudgetOpts), _str_out,
                                          _err]),
    "kvplan_perf_opts_init": (None, [ctypes.POINTER(PerfOpts)]),
    "kvplan_perf_json": (ctypes.c_int, [_p, _p, _p, ctypes.POINTER(BudgetOpts),
                                        ctypes.POINTER(PerfOpts), _str_out, _err]),
    "kvplan_workload_load": (ctypes.c_int, [ctypes.c_char_p, _pp, _err]),
    "kvplan_workload_load_lengths": (ctypes.c_int, [ctypes.c_char_p, _pp, _err]),
    "kvplan_workload_free": (None, [_p]),
    "kvplan_frag_opts_init": (None, [ctypes.POINTER(FragOpts)]),
    "kvplan_frag_json": (ctypes.c_int, [_p, _p, _p, _p, ctypes.POINTER(BudgetOpts),
                                        ctypes.POINTER(FragOpts), _str_out, _err]),
    "kvplan_size_opts_init": (None, [ctypes.POINTER(SizeOpts)]),
    "kvplan_size_json": (ctypes.c_int, [_p, ctypes.POINTER(_p), ctypes.c_size_t, _p, _p,
                                        ctypes.POINTER(BudgetOpts), ctypes.POINTER(SizeOpts),
                                        _str_out, _err]),
    "kvplan_profile_list": (ctypes.c_int, [ctypes.c_char_p, _str_out, _err]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def take_string(ptr: ctypes.c_void_p) -> str:
    """The library's malloc'd string as str, freed."""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8")
    finally:
        lib.kvplan_free(ptr)
