# Types of the tilewave module (docs/python.md "Results"): what each call
# takes and the dicts it returns, as TypedDicts. The results are the CLI's
# JSON (`--format json`); tests/python checks that these keys are exactly
# the keys a call returns.
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypedDict, Union, Unpack

__version__: str
# The share of measured settings a prediction interval is meant to hold (docs/model.md "Prediction intervals").
interval_coverage: float

_Path = Union[str, os.PathLike]

class InputError(ValueError): ...

class Loss(TypedDict):
    tile: float
    wave: float
    efficiency: float
    memory: float
    fixed: float
    idle: float

class Totals(TypedDict):
    flops: int
    bytes: int
    dram_bytes: int
    l2_hit_bytes: int
    time_us: float
    time_low_us: float   # time_us on the fastest machine of the host's kind (docs/model.md "Schedule")
    time_high_us: float  # ... and on the slowest
    gpu_busy_us: float
    host_busy_us: float
    bound_by: str  # "host" or "gpu"
    bound: str     # what sets the step: host, compute, memory, latency, tile, wave or cuda-core (docs/model.md "Schedule")
    utilization: float
    gpu_busy_utilization: float
    bandwidth_utilization: float
    throughput_per_s: float
    kernels: int
    loss: Loss

class NodeFate(TypedDict):
    name: str
    op: str
    fate: str  # kernel | fused | free | unmodelled
    kernels: List[int]
    params: int
    weight_bytes: int
    activation_read_bytes: int
    activation_write_bytes: int
    time_us: float
    step_share: float  # of the step time
    gpu_busy_share: float  # of the GPU's busy time
    utilization: float
    loss: Loss

class KernelGroup(TypedDict):
    name: str
    kernels: int
    time_us: float
    step_share: float  # of the step time
    gpu_busy_share: float  # of the GPU's busy time
    flops: int
    dram_bytes: int
    l2_hit_bytes: int
    utilization: float
    bandwidth_utilization: float

class Memory(TypedDict):
    params: int
    weight_bytes: int
    peak_activation_bytes: int
    peak_at: str

class Schedule(TypedDict):
    launch: str
    step_us: float
    gpu_busy_us: float
    gpu_idle_us: float
    host_busy_us: float
    host_bound: bool
    columns: List[str]
    timeline: List[List[float]]

# One kernel; GEMM-like kernels add tile, split_k, tiles, waves, tile_eff,
# wave_eff, mainloop_eff and aligned, a block-per-row kernel blocks and
# waves, a short-row softmax warps, values_per_thread and shuffles_per_warp
# (docs/model.md "Memory-bound kernels"), unmodelled ones have `unmodelled`
# instead of the cost fields (docs/report.md "CSV" lists them all).
class Layer(TypedDict, total=False):
    name: str
    op: str
    nodes: int
    host_call: str
    host_views: int  # view ops the host runs before it, when any (docs/model.md "Schedule")
    layer: Dict[str, Any]
    time_us: float
    kernel: str
    path: str
    flops: int
    bytes: int
    l2_hit_bytes: int
    intensity: float
    bound: str
    utilization: float
    bandwidth_utilization: float
    compute_us: float
    memory_us: float
    ramp_us: float  # the ramp term of memory time (docs/model.md "Memory time"); absent when zero
    fixed_us: float
    loss: Loss
    unmodelled: str

class RunFacts(TypedDict):
    model: str
    model_path: str
    gpu: str
    gpu_name: str
    gpu_trust: str
    gpu_param_sources: Dict[str, str]
    peak_tflops: float
    batch: int
    dtype: str
    runtime: str
    runtime_calibrated: bool
    execution: Dict[str, Any]
    host: Optional[Dict[str, Any]]  # id, name, trust, machine_spread {low, high}; None under graph replay
    launch_gap_us: float
    nodes: int
    free_nodes: int
    total: Totals
    # The 80% prediction interval (docs/model.md "Prediction intervals"): coverage, regime, network_class,
    # measured, basis, low_factor, high_factor, low_us, high_us, why_none.
    interval: Dict[str, Any]
    unmodelled: List[str]
    partial: bool

class Analysis(RunFacts):
    tilewave_version: str  # what `tilewave --version` prints (docs/report.md "Version")
    node_fates: List[NodeFate]
    by_op: List[KernelGroup]
    by_name: List[KernelGroup]
    memory: Memory
    schedule: Schedule
    layers: List[Layer]
    notes: List[str]

# Totals are one schema wherever they appear (docs/report.md "Field names").
class SweepPoint(Totals):
    batch: int
    host_bound: bool  # bound_by == "host"
    partial: bool     # unmodelled kernels left out of its time (allow_unmodelled=True)

class Sweep(TypedDict):
    tilewave_version: str  # what `tilewave --version` prints (docs/report.md "Version")
    model: str
    model_path: str
    gpu: str
    gpu_trust: str
    execution: Dict[str, Any]
    host: Optional[str]  # the host issuing a plain loop; None under graph replay
    points: List[SweepPoint]
    notes: List[str]  # one line when most points are host-bound

class Comparison(TypedDict):
    tilewave_version: str  # what `tilewave --version` prints (docs/report.md "Version")
    model: str
    models: List[str]
    configurations: List[RunFacts]
    notes: List[str]  # one line when most configurations are host-bound

class ComparisonOfTwo(Comparison):
    faster: str  # two models in one configuration: which is faster (samples/s, latency) and by how much
    findings: List[str]  # and why: what sets each step, utilization against FLOPs per sample, the losses

class Candidate(TypedDict):
    encoding: str
    flops: int
    params: int
    time_us: float
    latency_us: float  # time_us under its former name, until 1.0
    throughput_per_s: float
    utilization: float
    main_loss: str
    bound: str  # what sets its step, as Totals' bound
    kernels: int
    loss: Loss

class AdviceTotals(Totals):
    pass

class Advice(TypedDict):
    kind: str  # channels | depthwise | runtime | launch | layout | dtype | batch
    change: str
    detail: str
    gain: float
    not_fitted: str  # "" or why the change is priced on parameters not fitted for the GPU
    before: AdviceTotals
    after: AdviceTotals

# The configuration `advise` and `check` ran at.
class RunConfig(TypedDict):
    model: str
    gpu: str
    batch: int
    dtype: str
    runtime: str
    execution: Dict[str, Any]

class Advising(RunConfig):
    tilewave_version: str  # what `tilewave --version` prints (docs/report.md "Version")
    advice: List[Advice]

class KindError(TypedDict):
    kind: str
    pairs: int
    predicted_us: float
    measured_us: float

# One kernel class of `check` (analyzer/data/kernel_names.json "pairing").
ClassRow = TypedDict("ClassRow", {
    "class": str, "measured": int, "measured_us": float, "measured_share": float, "predicted": int,
    "predicted_us": float, "paired": int, "paired_measured_us": float, "paired_predicted_us": float,
    "paired_error": float, "same_class_paired": int, "same_class_measured_us": float,
    "same_class_predicted_us": float, "same_class_error": float, "missing": int, "missing_us": float, "extra": int,
    "extra_us": float})

# One pair of `check`; an unpaired kernel lacks its partner's fields, and
# shape_match is there only where the trace recorded the launching op's shapes.
class TracePair(TypedDict, total=False):
    predicted_us: float
    measured_us: float
    shape_match: bool
    predicted: str
    predicted_op: str
    predicted_kind: str
    predicted_class: str
    measured: str
    measured_kind: str
    measured_class: str

# An axis of the configuration a trace ran under, as the trace shows it.
class TraceSetting(TypedDict):
    option: str  # batch | layout | amp | dtype | runtime
    value: str
    evidence: str

class SettingMismatch(TypedDict):
    option: str
    trace: str
    predicted: str
    evidence: str

class TraceCheck(RunConfig):
    tilewave_version: str  # what `tilewave --version` prints (docs/report.md "Version")
    trace: str
    trace_configuration: List[TraceSetting]
    configuration_mismatches: List[SettingMismatch]
    measured_kernels: int
    profiler_step: str
    profiler_steps: int
    kernels_in_trace: int
    measured_kernel_us: float
    predicted_kernel_us: float
    paired: int
    median_abs_error: float
    shape_compared: int
    shape_matched: int
    by_kind: List[KindError]
    by_class: List[ClassRow]
    pairs: List[TracePair]

class RankedModel(Totals):
    model: str
    model_path: str
    unmodelled: int
    partial: bool

class RankFailure(TypedDict):
    model: str
    error: str

class Ranking(TypedDict):
    tilewave_version: str  # what `tilewave --version` prints (docs/report.md "Version")
    gpu: str
    gpu_trust: str
    host: Optional[str]  # the host issuing a plain loop; None under graph replay
    batch: int
    models: List[RankedModel]
    failed: List[RankFailure]
    kendall_tau_flops_vs_predicted: float
    host_bound_models: int  # models whose step the host sets
    notes: List[str]        # one line when most models are host-bound

# The execution options every analysing call takes as **options, generated
# from the option table (exec_options.h) by `tilewave options --format pyi`;
# tests/cli_test.sh checks this block against it.
# BEGIN tilewave options --format pyi
class ListOptions(TypedDict, total=False):  # analyze_layers and Space.scorer: no file, so no input
    gpu: _Path  # default "h200"
    gpu_dir: Optional[_Path]  # default None
    runtime: str  # default "eager"
    dtype: str  # default "fp16"
    attention: str  # default "fused"
    layout: Optional[str]  # default None
    amp: Optional[bool]  # default None
    graph: Optional[bool]  # default None
    host: Optional[_Path]  # default None
class ExecutionOptions(ListOptions, total=False):  # analyze, sweep, advise, check, rank, report, annotate
    input: Optional[Dict[str, Sequence[int]]]  # default None
    allow_unmodelled: bool  # default False
class CompareOptions(TypedDict, total=False):  # compare: gpus, runtimes, dtypes, layouts are lists
    gpus: Union[str, List[str]]  # default ["h200", "a100", "l4"]
    gpu_dir: Optional[_Path]  # default None
    runtimes: Union[str, List[str]]  # default ["eager"]
    dtypes: Union[str, List[str]]  # default ["fp16"]
    attention: str  # default "fused"
    layouts: Union[str, List[str]]  # default None
    amp: Optional[bool]  # default None
    graph: Optional[bool]  # default None
    host: Optional[_Path]  # default None
    input: Optional[Dict[str, Sequence[int]]]  # default None
    allow_unmodelled: bool  # default False
# END tilewave options --format pyi

def analyze(path: _Path, *, batch: Optional[int] = None, **options: Unpack[ExecutionOptions]) -> Analysis: ...
def analyze_text(path: _Path, *, batch: Optional[int] = None, format: str = "csv", top: int = 15, by: str = "",
                 **options: Unpack[ExecutionOptions]) -> str: ...
def sweep(path: _Path, *, batches: List[int] = ..., **options: Unpack[ExecutionOptions]) -> Sweep: ...
def compare(path: Union[_Path, List[_Path]], *, batches: Optional[List[int]] = None,
            **options: Unpack[CompareOptions]) -> Union[Comparison, ComparisonOfTwo]: ...
def advise(path: _Path, *, batch: Optional[int] = None, **options: Unpack[ExecutionOptions]) -> Advising: ...
def check(path: _Path, trace: _Path, *, batch: Optional[int] = None, **options: Unpack[ExecutionOptions]) -> TraceCheck: ...
def rank(paths: Sequence[_Path], *, batch: int = 1, threads: Optional[int] = None, keep_going: bool = False,
         **options: Unpack[ExecutionOptions]) -> Ranking: ...
# The CLI's text of advise, check and rank, as analyze_text is analyze's.
def advise_text(path: _Path, *, batch: Optional[int] = None, format: str = "table",
                **options: Unpack[ExecutionOptions]) -> str: ...
def check_text(path: _Path, trace: _Path, *, batch: Optional[int] = None, format: str = "table", top: int = 15,
               **options: Unpack[ExecutionOptions]) -> str: ...
def rank_text(paths: Sequence[_Path], *, batch: int = 1, threads: Optional[int] = None, format: str = "table",
              keep_going: bool = False, **options: Unpack[ExecutionOptions]) -> str: ...
def report(path: _Path, output: _Path, *, batch: Optional[int] = None, vs: Optional[_Path] = None,
           compare: List[str] = ..., batches: List[int] = ..., **options: Unpack[ExecutionOptions]) -> None: ...
def annotate(path: _Path, output: _Path, *, batch: Optional[int] = None,
             **options: Unpack[ExecutionOptions]) -> None: ...
def analyze_layers(layers: Any, *, input: List[int] = ..., batch: int = 1,
                   **options: Unpack[ListOptions]) -> Dict[str, Any]: ...
def execution_options() -> List[Dict[str, Any]]: ...
def layers_to_onnx(layers: Any, path: _Path, *, input: List[int] = ..., batch: int = 1) -> int: ...
def predict_layers(layers: Any, *, gpu: _Path = "h200", gpu_dir: Optional[_Path] = None) -> Any: ...
def gpus(gpu_dir: Optional[_Path] = None) -> List[str]: ...
def gpu_database(gpu_dir: Optional[_Path] = None) -> List[Dict[str, Any]]: ...  # `tilewave gpus --format json`
class Param(TypedDict):
    name: str
    file: str  # gpu | host
    unit: str
    default: float
    min: float
    max: float
    scope: str
    owner: str
    transfer: str
    meaning: str
def params() -> List[Param]: ...
def formats() -> List[Dict[str, str]]: ...  # command, format, summary: the view registry (docs/cli.md "Formats")
def default_host() -> str: ...
def write_host(host: Dict[str, Any], path: _Path) -> None: ...
def write_gpu(gpu: Dict[str, Any], path: _Path, *, gpu_dir: Optional[_Path] = ...) -> None: ...
def runtimes() -> List[Tuple[str, str]]: ...
def data_dirs() -> Tuple[str, str]: ...
def kernel_class_of_name(name: str, vocabulary: str = "check") -> str: ...
def kernel_name_vocabularies() -> List[str]: ...

class Scorer:
    def score(self, encoding: str) -> Candidate: ...
    def score_many(self, encodings: List[str]) -> List[Candidate]: ...
    distinct_blocks: int

class Space:
    name: str
    size: int
    def __init__(self, name_or_path: _Path) -> None: ...
    def options(self) -> Any: ...
    def sample(self, seed: int, index: int, *, unique: bool = False) -> str: ...
    def samples(self, n: int, *, seed: int = 1, unique: bool = False) -> List[str]: ...
    def enumerate(self) -> List[str]: ...
    def scorer(self, *, batch: int = 1, **options: Unpack[ListOptions]) -> Scorer: ...
    def export_onnx(self, encoding: str, path: _Path, *, batch: int = 1) -> None: ...
