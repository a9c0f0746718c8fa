"""kvplan: the KV-cache memory and latency planner for LLM serving, as a
Python package over the kvplan C library (include/kvplan.h, kvplan(3)).

Load a model, a GPU and an engine once, then ask as often as you like::

    import kvplan
    m = kvplan.Model("llama-3.1-8b")
    g = kvplan.GPU("h100-sxm")
    b = kvplan.budget(m, g, kvplan.Engine("vllm"), context=8192)
    b.max_sequences, b.fits, b.to_dict()

Every answer is the `kvplan` command's: the same library, the same
profiles.  Errors raise KvplanError with the message kvplan prints
("path:line:col: error: field: ..."); the library never prints or exits.
Handles are read-only once loaded and may be shared between threads (the C
calls release the GIL).
"""
from __future__ import annotations

import ctypes
import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _ffi

__all__ = ["KvplanError", "Model", "GPU", "Engine", "Workload", "Budget", "Perf", "Frag",
           "Size", "budget", "budget_record", "perf", "frag", "size", "sweep", "profiles",
           "version", "__version__"]

_lib = _ffi.lib


def version() -> str:
    """The C library's version (configure.ac's AC_INIT), e.g. "0.1.0"."""
    return _lib.kvplan_version().decode()


__version__ = version()


class KvplanError(Exception):
    """An error kvplan reports: str(e) is the message the CLI prints after
    "kvplan CMD: ", located where it can be ("path:line:col: error: field:
    message").

    Attributes: status (the kvplan_status number), status_name ("not found",
    "invalid value", ...), message, path ("" when none), line and col
    (1-based, 0 when unknown), field ("" when none).
    """

    def __init__(self, err: _ffi.Error):
        self.status: int = err.status
        self.status_name: str = _lib.kvplan_status_str(err.status).decode()
        self.message: str = err.message.decode("utf-8", "replace")
        self.path: str = err.path.decode("utf-8", "replace")
        self.line: int = err.line
        self.col: int = err.col
        self.field: str = err.field.decode("utf-8", "replace")
        super().__init__(self.message)


def _check(rc: int, err: _ffi.Error) -> None:
    if rc != 0:
        raise KvplanError(err)


def _path(name_or_path: Union[str, "os.PathLike[str]"]) -> bytes:
    return os.fsencode(name_or_path)


def _calibrations(calibration: Any) -> "tuple[Optional[bytes], Optional[bytes]]":
    """calibration as one path or a sequence of one or two (--calibration
    given twice: an engine calibration and a kvbench run), as the C
    options' calibration and calibration_kernel."""
    if calibration is None:
        return None, None
    if isinstance(calibration, (str, bytes, os.PathLike)):
        return _path(calibration), None
    paths = [_path(c) for c in calibration]
    if not 1 <= len(paths) <= 2:
        raise ValueError("calibration: one or two files (an engine calibration and a "
                         "kvbench run), got %d" % len(paths))
    return paths[0], paths[1] if len(paths) > 1 else None


class _Handle:
    _free = None  # the C free function's name
    _ptr: Optional[int] = None

    def close(self) -> None:
        """Free the handle now (else it is freed when collected)."""
        if self._ptr:
            getattr(_lib, self._free)(self._ptr)
            self._ptr = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Model(_Handle):
    """A model: a profile name ("llama-3.1-8b"), a kvplan YAML file, a
    Hugging Face config.json or a GGUF file.  Raises KvplanError."""

    _free = "kvplan_model_free"

    def __init__(self, name_or_path: Union[str, "os.PathLike[str]"]):
        h, err = ctypes.c_void_p(), _ffi.Error()
        _check(_lib.kvplan_model_load(_path(name_or_path), ctypes.byref(h), ctypes.byref(err)),
               err)
        self._ptr = h.value

    @property
    def name(self) -> str:
        return _lib.kvplan_model_name(self._ptr).decode()

    @property
    def max_context(self) -> int:
        """The longest context the model takes, in tokens."""
        return _lib.kvplan_model_max_context(self._ptr)

    @property
    def warnings(self) -> List[str]:
        """What the importer noted (the CLI prints these on stderr)."""
        n = _lib.kvplan_model_warning_count(self._ptr)
        return [_lib.kvplan_model_warning(self._ptr, i).decode() for i in range(n)]

    def __repr__(self) -> str:
        return "kvplan.Model(%r)" % self.name


class GPU(_Handle):
    """A GPU profile by name ("h100-sxm") or path.  Raises KvplanError."""

    _free = "kvplan_gpu_free"

    def __init__(self, name_or_path: Union[str, "os.PathLike[str]"]):
        h, err = ctypes.c_void_p(), _ffi.Error()
        _check(_lib.kvplan_gpu_load(_path(name_or_path), ctypes.byref(h), ctypes.byref(err)),
               err)
        self._ptr = h.value

    @property
    def name(self) -> str:
        return _lib.kvplan_gpu_name(self._ptr).decode()

    @property
    def memory_bytes(self) -> int:
        return _lib.kvplan_gpu_memory_bytes(self._ptr)

    def __repr__(self) -> str:
        return "kvplan.GPU(%r)" % self.name


class Engine(_Handle):
    """An engine's memory policy: "generic", "vllm", "sglang" or "trtllm", at
    `version` (None: the newest kvplan models).  Raises KvplanError."""

    _free = "kvplan_engine_free"

    def __init__(self, name: str = "generic", version: Optional[str] = None):
        h, err = ctypes.c_void_p(), _ffi.Error()
        _check(_lib.kvplan_engine_load(name.encode(), version.encode() if version else None,
                                       ctypes.byref(h), ctypes.byref(err)), err)
        self._ptr = h.value

    @property
    def name(self) -> str:
        return _lib.kvplan_engine_name(self._ptr).decode()

    @property
    def version(self) -> str:
        """The version modelled ("" for generic)."""
        return _lib.kvplan_engine_version(self._ptr).decode()

    def __repr__(self) -> str:
        return "kvplan.Engine(%r, %r)" % (self.name, self.version or None)


class Workload(_Handle):
    """A workload (request lengths, arrivals, a shared prefix): a profile
    name ("chat") or a workload YAML file; Workload.lengths(path) reads a
    lengths file (`kvplan frag --lengths`).  Raises KvplanError."""

    _free = "kvplan_workload_free"

    def __init__(self, name_or_path: Union[str, "os.PathLike[str]"], *, _lengths: bool = False):
        h, err = ctypes.c_void_p(), _ffi.Error()
        load = _lib.kvplan_workload_load_lengths if _lengths else _lib.kvplan_workload_load
        _check(load(_path(name_or_path), ctypes.byref(h), ctypes.byref(err)), err)
        self._ptr = h.value
        self._name = os.fspath(name_or_path)

    @classmethod
    def lengths(cls, path: Union[str, "os.PathLike[str]"]) -> "Workload":
        """A lengths file: prompt and output tokens a line (an arrival time
        as a third column)."""
        return cls(path, _lengths=True)

    def __repr__(self) -> str:
        return "kvplan.Workload(%r)" % self._name


@dataclass(frozen=True)
class Budget:
    """One GPU's memory budget (the worst under tp/pp), as `kvplan budget`
    computes it; byte counts in bytes, counts in tokens and sequences.  The
    field names are those of `kvplan budget --format json`."""

    model: str
    gpu: str
    engine: str
    fits: bool                    # batch sequences of context tokens fit
    weights_fit: bool             # weights + activations + overhead fit at all
    block_size: int
    context: int
    batch: int
    kv_bytes_per_token: int       # on this GPU
    kv_bytes_per_sequence: int    # pool bytes one sequence of context takes
    kv_bytes: int                 # exact KV of batch sequences
    gpu_memory_bytes: int
    usable_bytes: int
    weights_bytes: int
    activation_bytes: int
    overhead_bytes: int
    kv_pool_bytes: int
    num_blocks: int
    max_tokens: int
    max_sequences: int
    max_sequences_low: int        # the uncertainty band
    max_sequences_high: int

    def to_dict(self) -> Dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class Perf:
    """`kvplan perf` for one replica: `record` is the JSON record the CLI
    prints (every field, man/kvplan.1 PERF), `rows` its rows, one per batch
    (ttft_s, tpot_s, output_tokens_per_s, decode_tokens_per_s, fits, ...)."""

    record: Dict[str, Any] = field(repr=False)
    rows: List[Dict[str, Any]]

    def to_dict(self) -> Dict[str, Any]:
        """The record as `kvplan perf --format json` prints it."""
        return dict(self.record)


@dataclass(frozen=True)
class Frag:
    """`kvplan frag`: `record` is the JSON record the CLI prints (man/kvplan.1
    FRAG), `rows` one per allocator policy and block size, and
    `recommendation` the block size kvplan recommends and why."""

    record: Dict[str, Any] = field(repr=False)
    rows: List[Dict[str, Any]]
    recommendation: Dict[str, Any]

    def to_dict(self) -> Dict[str, Any]:
        """The record as `kvplan frag --format json` prints it."""
        return dict(self.record)


@dataclass(frozen=True)
class Size:
    """`kvplan size`: `record` is the JSON record the CLI prints (man/kvplan.1
    SIZE), `configs` the configurations searched in rank order (cheapest
    that meets first), `chosen` the cheapest that meets every constraint
    (None when none does: then `nearest`, the closest misses)."""

    record: Dict[str, Any] = field(repr=False)
    configs: List[Dict[str, Any]] = field(repr=False)
    chosen: Optional[Dict[str, Any]]
    nearest: List[Dict[str, Any]]

    def to_dict(self) -> Dict[str, Any]:
        """The record as `kvplan size --format json` prints it."""
        return dict(self.record)


_BUDGET_FIELDS = [f.name for f in fields(Budget)][3:]


def _opts(tp: int = 1, pp: int = 1, dp: int = 0, ep: int = 0, num_gpus: int = 0,
          context: Optional[int] = None, batch: Optional[int] = None,
          utilization: Optional[float] = None, block_size: Optional[int] = None,
          max_num_seqs: Optional[int] = None, max_batched_tokens: Optional[int] = None,
          dtype: Optional[str] = None, kv_dtype: Optional[str] = None,
          gpu_memory_bytes: Optional[int] = None, weights_bytes: Optional[int] = None,
          activation_bytes: Optional[int] = None, overhead_bytes: Optional[int] = None,
          disable_hybrid_kv: bool = False) -> _ffi.BudgetOpts:
    o = _ffi.BudgetOpts()
    o.size = ctypes.sizeof(o)
    o.tp, o.pp, o.dp, o.ep, o.num_gpus = tp, pp, dp, ep, num_gpus
    o.context = context or 0
    o.batch = batch or 0
    o.utilization = utilization or 0.0
    o.block_size = block_size or 0
    o.max_num_seqs = max_num_seqs or 0
    o.max_batched_tokens = max_batched_tokens or 0
    o.dtype = dtype.encode() if dtype else None
    o.kv_dtype = kv_dtype.encode() if kv_dtype else None
    o.disable_hybrid_kv = 1 if disable_hybrid_kv else 0
    s = 0
    for bit, name, v in ((_ffi.SET_GPU_MEMORY, "gpu_memory_bytes", gpu_memory_bytes),
                         (_ffi.SET_WEIGHTS, "weights_bytes", weights_bytes),
                         (_ffi.SET_ACTIVATION, "activation_bytes", activation_bytes),
                         (_ffi.SET_OVERHEAD, "overhead_bytes", overhead_bytes)):
        if v is not None:
            s |= bit
            setattr(o, name, v)
    o.set = s
    return o


def _ptr(h: Optional[_Handle]) -> Optional[int]:
    return h._ptr if h is not None else None


def budget(model: Model, gpu: Optional[GPU] = None, engine: Optional[Engine] = None,
           **options: Any) -> Budget:
    """One GPU's memory budget: `kvplan budget`'s answer as a Budget.

    model, gpu, engine: loaded handles (gpu may be None when
    gpu_memory_bytes is given; engine None: generic).  Options, as the
    CLI's flags (kvplan(1); None or 0 means the default): tp, pp, dp, ep,
    num_gpus, context (tokens; default the model's max), batch (sequences;
    default 1), utilization (0..1], block_size, max_num_seqs,
    max_batched_tokens, dtype, kv_dtype ("fp8", ...), gpu_memory_bytes,
    weights_bytes, activation_bytes, overhead_bytes (given: replace what is
    modelled; 0 is a value), disable_hybrid_kv.

    Not fitting is an answer (fits False), not an error.  Raises
    KvplanError on a bad option or a split the model refuses.
    """
    o = _opts(**options)
    r, err = _ffi.BudgetResult(), _ffi.Error()
    r.size = ctypes.sizeof(r)
    _check(_lib.kvplan_budget(model._ptr, _ptr(gpu), _ptr(engine), ctypes.byref(o),
                              ctypes.byref(r), ctypes.byref(err)), err)
    return Budget(model.name, gpu.name if gpu is not None else "custom",
                  engine.name if engine is not None else "generic",
                  bool(r.fits), bool(r.weights_fit),
                  *[getattr(r, n) for n in _BUDGET_FIELDS[2:]])


def budget_record(model: Model, gpu: Optional[GPU] = None, engine: Optional[Engine] = None,
                  **options: Any) -> Dict[str, Any]:
    """The budget as the dict of `kvplan budget --format json` (every field
    of the output contract but "warnings"); options as for budget()."""
    o = _opts(**options)
    out, err = ctypes.c_void_p(), _ffi.Error()
    _check(_lib.kvplan_budget_json(model._ptr, _ptr(gpu), _ptr(engine), ctypes.byref(o),
                                   ctypes.byref(out), ctypes.byref(err)), err)
    return json.loads(_ffi.take_string(out))


def perf(model: Model, gpu: GPU, engine: Optional[Engine] = None, *,
         prompt: Optional[int] = None, output: Optional[int] = None,
         batches: Sequence[int] = (1,), decode_bw_efficiency: Optional[float] = None,
         prefill_flops_efficiency: Optional[float] = None,
         calibration: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]],
                            None] = None, **options: Any) -> Perf:
    """Time to first token, time per output token and throughput of one
    replica (`kvplan perf`): prompt tokens (default: context, else 1024),
    output tokens (default 256), one row per batch in `batches` (at most
    64); decode_bw_efficiency and prefill_flops_efficiency (fractions in
    (0, 1]) over the GPU profile's, or over calibration's: a calibration
    file of this GPU (kvbench --out, a table, `kvplan calibrate`'s; the
    record's "calibration" names it), or a sequence of two: an engine
    calibration and a kvbench run, composed as --calibration given twice
    (the record's "calibration_kernel" names the kvbench run); the budget's
    options as for budget().  Raises KvplanError."""
    o = _opts(**options)
    p = _ffi.PerfOpts()
    p.size = ctypes.sizeof(p)
    p.prompt = prompt or 0
    p.output = output or 0
    arr = (ctypes.c_uint64 * len(batches))(*batches)
    p.batches = arr
    p.nbatch = len(batches)
    p.decode_bw_efficiency = decode_bw_efficiency or 0.0
    p.prefill_flops_efficiency = prefill_flops_efficiency or 0.0
    p.calibration, p.calibration_kernel = _calibrations(calibration)
    out, err = ctypes.c_void_p(), _ffi.Error()
    _check(_lib.kvplan_perf_json(model._ptr, gpu._ptr, _ptr(engine), ctypes.byref(o),
                                 ctypes.byref(p), ctypes.byref(out), ctypes.byref(err)), err)
    rec = json.loads(_ffi.take_string(out))
    return Perf(rec, list(rec.get("rows", [])))


def frag(model: Model, gpu: Optional[GPU], workload: Workload, engine: Optional[Engine] = None,
         *, max_len: Optional[int] = None, requests: Optional[int] = None,
         seed: Optional[int] = None, warmup: Optional[int] = None,
         block_sizes: Sequence[int] = (), arrival_rate: Optional[float] = None,
         step_time_s: Optional[float] = None, **options: Any) -> Frag:
    """The paged-KV fragmentation simulator (`kvplan frag`) over `workload`
    on the budget's KV pool: max_len (tokens; default the workload's, the
    context, the model's), requests (default 100,000: seconds of work),
    seed (default 1), warmup (requests before measuring; default a tenth),
    block_sizes (the paged rows; default kvplan's list), arrival_rate
    (requests/s: arrivals over time instead of a closed batch),
    step_time_s; the budget's options as for budget().  Raises KvplanError.
    """
    o = _opts(**options)
    f = _ffi.FragOpts()
    _lib.kvplan_frag_opts_init(ctypes.byref(f))
    f.max_len = max_len or 0
    f.requests = requests or 0
    f.seed = seed or 0
    if warmup is not None:
        f.warmup = warmup
    arr = (ctypes.c_uint32 * max(1, len(block_sizes)))(*block_sizes)
    if block_sizes:
        f.block_sizes = arr
        f.nblock = len(block_sizes)
    f.arrival_rate = arrival_rate or 0.0
    f.step_time_s = step_time_s or 0.0
    out, err = ctypes.c_void_p(), _ffi.Error()
    _check(_lib.kvplan_frag_json(model._ptr, _ptr(gpu), _ptr(engine), workload._ptr,
                                 ctypes.byref(o), ctypes.byref(f), ctypes.byref(out),
                                 ctypes.byref(err)), err)
    rec = json.loads(_ffi.take_string(out))
    return Frag(rec, list(rec.get("rows", [])), dict(rec.get("recommendation") or {}))


def _u32s(values: Sequence[int]):
    return (ctypes.c_uint32 * max(1, len(values)))(*values)


def size(model: Model, gpus: Sequence[GPU], workload: Workload,
         engine: Optional[Engine] = None, *, rate: Optional[float] = None,
         users: Optional[int] = None, ttft_s: Optional[float] = None,
         tpot_s: Optional[float] = None, percentile: Optional[float] = None,
         queue_percentile: bool = False, tp: Sequence[int] = (), pp: Sequence[int] = (),
         dp: Sequence[int] = (), ep: Sequence[int] = (), kv_dtypes: Sequence[str] = (),
         max_num_seqs_caps: Sequence[int] = (), disagg: Sequence[Sequence[int]] = (),
         prices: Optional[Sequence[Optional[float]]] = None, cost: Optional[str] = None,
         years: Optional[float] = None, power_usd_per_kwh: Optional[float] = None,
         pue: Optional[float] = None, cost_utilization: Optional[float] = None,
         max_replicas: Optional[int] = None, decode_bw_efficiency: Optional[float] = None,
         prefill_flops_efficiency: Optional[float] = None,
         latency_spread: Optional[float] = None, simulate: int = 0, pareto: bool = False,
         emit: Optional[str] = None,
         calibration: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]],
                            None] = None, **options: Any) -> Size:
    """GPU purchase sizing (`kvplan size`) of `model` over `workload` on
    each GPU of `gpus` (1 to 64 handles): the fewest replicas that meet
    memory, throughput and the service levels at every tensor-parallel
    size, ranked by cost.  As the CLI's flags (kvplan(1); None, 0 or empty
    means the default): rate (requests/s), users, ttft_s, tpot_s,
    percentile, queue_percentile (--slo-percentile), the axes tp (default
    1, 2, 4, 8), pp, dp, ep, kv_dtypes, max_num_seqs_caps (--max-num-seqs),
    disagg ([(P, D), ...]), prices (one per GPU, USD per GPU-hour; None:
    the profile's), cost ("cloud", "cloud:KIND", "own") and the owned
    terms years, power_usd_per_kwh, pue, cost_utilization, max_replicas,
    decode_bw_efficiency, prefill_flops_efficiency, latency_spread,
    simulate, pareto; emit ("vllm", "sglang" or "trtllm": the record's
    "emit", that engine's launch command for the chosen configuration, and
    with no `engine` that engine planned with); calibration (a calibration
    file of the one GPU searched, or two as for perf(): its efficiencies
    and latency spread where none is given); the budget's engine-side options as for budget()
    (not tp, pp, dp, ep, num_gpus or max_num_seqs: the search sets them).
    Nothing meeting the levels is an answer (chosen None), not an error.
    Raises KvplanError."""
    o = _opts(**options)
    s = _ffi.SizeOpts()
    _lib.kvplan_size_opts_init(ctypes.byref(s))
    s.rate, s.users = rate or 0.0, users or 0
    s.ttft_s, s.tpot_s, s.percentile = ttft_s or 0.0, tpot_s or 0.0, percentile or 0.0
    s.queue_percentile = 1 if queue_percentile else 0
    keep = []  # the arrays the struct points into, alive until the call returns
    for name, values in (("tp", tp), ("pp", pp), ("dp", dp), ("ep", ep)):
        if values:
            arr = _u32s(values)
            keep.append(arr)
            setattr(s, name, arr)
            setattr(s, "n" + name, len(values))
    if kv_dtypes:
        arr = (ctypes.c_char_p * len(kv_dtypes))(*[k.encode() for k in kv_dtypes])
        keep.append(arr)
        s.kv_dtypes, s.nkv_dtypes = arr, len(kv_dtypes)
    if max_num_seqs_caps:
        arr = (ctypes.c_uint64 * len(max_num_seqs_caps))(*max_num_seqs_caps)
        keep.append(arr)
        s.max_num_seqs, s.nmax_num_seqs = arr, len(max_num_seqs_caps)
    if disagg:
        pair = ctypes.c_uint32 * 2
        arr = (pair * len(disagg))(*[pair(*pd) for pd in disagg])
        keep.append(arr)
        s.disagg, s.ndisagg = ctypes.cast(arr, ctypes.POINTER(pair)), len(disagg)
    gs = list(gpus)
    if prices is not None:
        if len(prices) != len(gs):
            raise ValueError("size(): one price per GPU (None: the profile's)")
        arr = (ctypes.c_double * max(1, len(gs)))(*[p or 0.0 for p in prices])
        keep.append(arr)
        s.prices = arr
    s.cost = cost.encode() if cost else None
    s.years, s.power_usd_per_kwh = years or 0.0, power_usd_per_kwh or 0.0
    s.pue, s.cost_utilization = pue or 0.0, cost_utilization or 0.0
    s.max_replicas = max_replicas or 0
    s.decode_bw_efficiency = decode_bw_efficiency or 0.0
    s.prefill_flops_efficiency = prefill_flops_efficiency or 0.0
    if latency_spread is not None:
        s.latency_spread = latency_spread
    s.simulate, s.pareto_only = simulate, 1 if pareto else 0
    s.emit = emit.encode() if emit else None
    s.calibration, s.calibration_kernel = _calibrations(calibration)
    handles = (ctypes.c_void_p * max(1, len(gs)))(*[g._ptr for g in gs])
    out, err = ctypes.c_void_p(), _ffi.Error()
    _check(_lib.kvplan_size_json(model._ptr, handles, len(gs), _ptr(engine), workload._ptr,
                                 ctypes.byref(o), ctypes.byref(s), ctypes.byref(out),
                                 ctypes.byref(err)), err)
    rec = json.loads(_ffi.take_string(out))
    return Size(rec, list(rec.get("configs", [])), rec.get("chosen"),
                list(rec.get("nearest", [])))


def profiles(kind: str = "models") -> List[str]:
    """The names of the built-in profiles: "models", "gpus", "workloads" or
    "engines", sorted."""
    out, err = ctypes.c_void_p(), _ffi.Error()
    _check(_lib.kvplan_profile_list(kind.encode(), ctypes.byref(out), ctypes.byref(err)), err)
    return [n for n in _ffi.take_string(out).split("\n") if n]


def sweep(models: Iterable[Union[str, Model]], gpus: Iterable[Union[str, GPU]],
          engine: Union[str, Engine, None] = "vllm", *, frame: Optional[bool] = None,
          **options: Any):
    """The budget of every model on every GPU (options as for budget()).

    Returns a pandas DataFrame (one row per pair, Budget's fields as
    columns) when pandas is installed and frame is not False, else a list
    of Budget.  frame=True requires pandas.  A pair that kvplan refuses
    (a split the model does not take) raises KvplanError.
    """
    eng = Engine(engine) if isinstance(engine, str) else engine
    ms = [m if isinstance(m, Model) else Model(m) for m in models]
    gs = [g if isinstance(g, GPU) else GPU(g) for g in gpus]
    rows = [budget(m, g, eng, **options) for m in ms for g in gs]
    if frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if frame:
            raise
        return rows
    return pandas.DataFrame([r.to_dict() for r in rows])
