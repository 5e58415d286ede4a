"""What an error line no rule reads means: its category from the structured fields the parsers filled.

In this order: a C++ exception the NCCL watchdog raised (a timeout), the event kind, the NCCL result code, the
library a native crash happened in, the signal, the exception type (its last dotted part), the errno-like words of a socket, CUDA or NCCL error, and
last the family the line belongs to. Never from a list of message texts of one log.
"""

from __future__ import annotations

import polars as pl

from nccllens import lazy_regex
from nccllens.parse.raised_where import RECEIVED_OBJECT
from nccllens.parse.tracebacks import traceback_frames

# ncclResult_t: 1 unhandled CUDA error, 2 system error, 3 internal error, 4 invalid argument,
# 5 invalid usage, 6 remote error (a peer went away), 7 in progress (not a failure)
NCCL_RESULT = {1: "cuda_error", 2: "nccl_internal", 3: "nccl_internal", 4: "nccl_internal", 5: "nccl_internal",
               6: "peer_exited"}
SIGNAL = {"SIGKILL": "host_oom", "SIGBUS": "shm_exhausted", "SIGTERM": "job_killed", "SIGINT": "job_killed",
          "SIGHUP": "job_killed", "SIGSEGV": "application_error", "SIGABRT": "application_error",
          "SIGFPE": "application_error", "SIGILL": "config_mismatch"}
# a native crash (a fault, not a signal sent from outside) by the library its backtrace's innermost frames lie
# in, as the crash family writes it at the head of the event's detail ("in libnccl.so.2; frames: ...")
FAULTS = ("SIGSEGV", "SIGABRT", "SIGFPE")
# (the communication stack: NCCL and RCCL, their network plugins, UCX and UCC, libfabric; a backtrace printed without
# library names, as UCX's handler prints it, by its innermost function past the signal trampoline)
CRASH_LIBRARY = ((lazy_regex.compile(r"^in lib(?:nccl|rccl|ucp|ucs|uct|ucm|ucc|fabric)"), "nccl_internal"),
                 (lazy_regex.compile(r"^frames: (?:\w*sigaction, |__restore_rt, )*(?:nccl|rccl|ucp_|ucs_|uct_|ucc_|fi_)"),
                  "nccl_internal"),
                 (lazy_regex.compile(r"^in lib(?:cuda|cudart|nvidia-[\w-]+)\.so"), "cuda_error"))
# the object a fault happened in, as the kernel's segfault and trap reports end: `` in libnccl.so.2[7f0c89a00000+1e00000]``
FAULT_OBJECT = lazy_regex.compile(r"\bin [^\s\[]+(?=\[)")
# event kinds whose meaning the parser already fixed
KIND = {"torch.watchdog_timeout": "collective_timeout", "torch.store_timeout": "rendezvous_timeout",
        "torchrun.rendezvous_error": "rendezvous_timeout", "kernel.xid": "gpu_hardware", "kernel.sxid": "gpu_hardware",
        "kernel.fallen_off_bus": "gpu_hardware", "kernel.ecc": "gpu_hardware", "kernel.oom_kill": "host_oom",
        "slurm.oom_kill": "host_oom", "slurm.cancelled": "job_killed", "torch.fingerprint_mismatch": "rank_divergence"}
# exception type (its last dotted part) -> category; any other type is the application's own error
EXCEPTION = {
    "OutOfMemoryError": "gpu_oom", "DistBackendError": "nccl_internal", "NCCLError": "nccl_internal",
    "DistStoreError": "rendezvous_timeout", "RendezvousTimeoutError": "rendezvous_timeout",
    "RendezvousClosedError": "peer_exited", "DistNetworkError": "network_unreachable",
    "ConnectionRefusedError": "network_unreachable", "TimeoutError": "network_unreachable",
    "socket.timeout": "network_unreachable", "gaierror": "network_unreachable",
    "ConnectionResetError": "peer_exited", "BrokenPipeError": "peer_exited", "ConnectionAbortedError": "peer_exited",
    "MemoryError": "host_oom",
    # a CUDA call failed: c10's C++ type (``terminate called after throwing an instance of 'c10::CUDAError'``),
    # torch.cuda.CudaError, and torch.AcceleratorError (torch 2.8+ raises it for a CUDA error)
    "CUDAError": "cuda_error", "CudaError": "cuda_error", "AcceleratorError": "cuda_error",
    "ResourceExhaustedError": "gpu_oom",  # TensorFlow's "OOM when allocating tensor ... on .../device:GPU:0"
    "ActorDiedError": "peer_exited", "RayActorError": "peer_exited",  # a Ray actor's process went away
    "KeyboardInterrupt": "job_killed",  # SIGINT: someone (or something) stopped the run from outside
    "SignalException": "job_killed",  # torchrun's agent got a signal (its workers were stopped with it)
}
RDMA = "rdma transport"  # INNER's reading of an RDMA transport's own error, settled by ``rdma_category``
# what a socket / store / runtime error says about its inner cause (errno names, CUDA and NCCL words)
INNER = (
    (r"(?i)out of memory", "gpu_oom"),
    # PyTorch's "CUDA error: ..." (runtime API) and "CUDA driver error: ..." (driver API), Triton's "Error [CUDA]",
    # the CUDA API's own result names (a C++ check "error == cudaSuccess (4 vs. 0)", CUDA_ERROR_LAUNCH_FAILED)
    (r"(?i)CUDA (?:driver |runtime )?error|Error \[CUDA\]|CUDA kernel errors|CUBLAS_STATUS|cuDNN error|device-side assert"
     r"|\bcudaSuccess\b|\bcudaError[A-Z]\w*|\bCUDA_ERROR_[A-Z_]+", "cuda_error"),
    (r"(?i)connection refused|timed out|failed to connect|no route to host|unreachable|name or service not known|"
     r"temporary failure in name resolution|could not resolve", "network_unreachable"),
    (r"(?i)connection reset|connection closed|broken pipe|closed by (?:remote )?peer|got 0 bytes|EOF", "peer_exited"),
    # NCCL's RDMA transports (its IB verbs and AWS OFI plugins) reporting their own failure: which of the two
    # categories it is depends on what NCCL did next (``rdma_category``)
    (r"NET/IB\b|NET/OFI\b|\bibv_[a-z_]+\b|\bmlx5_\d", RDMA),
    # a program that checks the versions of its peers says so: Ray's "Version mismatch: The cluster was started with"
    (r"(?i)\bversion mismatch\b|\bversions? (?:do not|don't) match\b", "config_mismatch"),
    (r"(?i)\bNCCL\b|nccl[A-Z]\w+Error", "nccl_internal"),
)
INNER_COMPILED = [(lazy_regex.compile(pattern), category) for pattern, category in INNER]
# what an error line of a family says when nothing more specific does: a scheduler's or a container runtime's
# error is about the job's allocation, the kernel's about the machine, a crash report about the process itself
FAMILY_DEFAULT = {"python": "application_error", "log": "application_error", "cpp": "application_error",
                  "slurm": "job_killed", "k8s": "job_killed", "harness": "job_killed", "kernel": "gpu_hardware"}
WATCHDOG_FRAMES = lazy_regex.compile(r"[Ww]atchdog|checkTimeout")
# where a process interrupted by SIGINT (Ctrl-C) stood, read from its traceback's innermost frames
# (``path:line in function``): a join of the job (store, rendezvous) or a collective it was waiting in
STORE_WAIT = lazy_regex.compile(
    r"/rendezvous/|\b(?:init_process_group|_store_based_barrier|_create_c10d_store|_env_rendezvous_handler|"
    r"next_rendezvous|_rendezvous_helper)\b|\bstore\.(?:wait|get)\b")
COLLECTIVE_WAIT = lazy_regex.compile(
    r"torch/distributed/(?:distributed_c10d|c10d_logger|utils)\.py:\d+ in |torch/distributed/fsdp/|"
    r"torch/nn/parallel/distributed\.py:\d+ in (?:__init__|_sync\w*|_verify\w*)\b|deepspeed/comm/|"
    r"horovod/\w+/mpi_ops\.py|\b(?:barrier|all_reduce|broadcast|all_gather\w*|reduce_scatter\w*)\b$")
# the collectives a job makes once, while it starts (DDP's parameter check and broadcast, new groups): a
# healthy job spends an instant in them, so an interrupt that lands there ended a hang. An interrupt in a
# training step's all_reduce says nothing alone: a running job stopped by hand is often there (both ranks
# of a real gloo run, twice in three tries)
STARTUP_COLLECTIVE = lazy_regex.compile(
    r"\b(?:_verify_param\w*|_sync_module_states|_sync_params_and_buffers|new_group|_new_group_with_tag)\b|"
    r"torch/nn/parallel/distributed\.py:\d+ in __init__\b")
INTERRUPTS = ("KeyboardInterrupt",)
_SCOPES = lazy_regex.compile(r"\.|::")  # a type's module or namespace path


def _short_type(exc) -> str:
    """An exception type without its module or namespace: torch.distributed.DistBackendError, c10::CUDAError."""
    return _SCOPES.split(str(exc or ""))[-1]


def waits_in(detail: str | None) -> tuple[str, str] | None:
    """``(category, function)`` when a traceback's innermost frames wait in a join of the job
    (rendezvous_timeout) or in a collective (collective_timeout)."""
    frames = traceback_frames(detail)
    for frame in reversed(frames[-3:]):  # the innermost first
        function = frame.rsplit(" in ", 1)[-1]
        if STORE_WAIT.search(frame):
            return "rendezvous_timeout", function
        if COLLECTIVE_WAIT.search(frame):
            return "collective_timeout", function
    return None


def is_interrupt(row: dict) -> bool:
    exc = _short_type(row.get("exc_type"))
    return exc in INTERRUPTS or row.get("signal") == "SIGINT"


def interrupted_wait(row: dict) -> tuple[str, str] | None:
    """``(category, function)`` when an interrupt (Ctrl-C) ended a process that was waiting in a join of the
    job or in a collective it makes while starting: the job hung there, and the interrupt is someone's
    reaction to the hang, not its cause."""
    if not is_interrupt(row):
        return None
    waiting = waits_in(row.get("detail"))
    if waiting is None or waiting[0] == "rendezvous_timeout":
        return waiting
    return waiting if any(STARTUP_COLLECTIVE.search(f) for f in traceback_frames(row.get("detail"))[-4:]) else None


def category_of(row: dict) -> str:
    code, signal, exc = row.get("error_code"), row.get("signal"), row.get("exc_type")
    if row.get("kind") == "cpp.raised" and WATCHDOG_FRAMES.search(f"{row.get('message') or ''} {row.get('detail') or ''}"):
        return "collective_timeout"  # a C++ exception the NCCL watchdog raised: its timeout
    if row.get("kind") in KIND:
        return KIND[row["kind"]]
    if row.get("key") == RECEIVED_OBJECT:  # bytes an object collective received that were no object: it failed
        return "collective_timeout"
    waiting = interrupted_wait(row)
    if waiting:
        return waiting[0]
    if (row.get("kind") or "").startswith("nccl.") and code in NCCL_RESULT:
        return NCCL_RESULT[code]
    if signal in FAULTS and row.get("kind") == "cpp.signal":
        for pattern, category in CRASH_LIBRARY:
            if pattern.search(str(row.get("detail") or "")):
                return category
    if row.get("kind") == "kernel.segfault":  # the kernel's report of a process's own fault, by the object it was in
        where = FAULT_OBJECT.search(str(row.get("message") or ""))
        return next((category for pattern, category in CRASH_LIBRARY if where and pattern.search(where[0])),
                    "application_error")
    if signal in SIGNAL:
        return SIGNAL[signal]
    text = f"{row.get('message') or ''} {row.get('detail') or ''}"
    if exc:
        short = _short_type(exc)
        if short in EXCEPTION or str(exc) in EXCEPTION:
            return EXCEPTION.get(short) or EXCEPTION[str(exc)]
        if short not in ("RuntimeError", "Error", "Exception", "SystemExit"):
            return "application_error"
    for pattern, category in INNER_COMPILED:
        if pattern.search(text):
            return category
    if exc:
        return "application_error"
    return FAMILY_DEFAULT.get(row.get("family") or "", "nccl_internal")


def rdma_category(events: pl.DataFrame) -> str:
    """An RDMA transport's error that no rule reads, by what NCCL used: an error of the fabric NCCL was using when
    it chose that transport (``Using network IB``: ib_fabric, as the taxonomy reads a transport error); else a
    transport that did not start, NCCL carrying on over sockets (ib_fallback)."""
    if "kind" not in events.columns or "value" not in events.columns:
        return "ib_fallback"
    kind = pl.col("kind").cast(pl.String)
    network = pl.col("value").cast(pl.String).fill_null("")
    # NCCL initialises its socket transport only once no RDMA one came up (``NET/Socket : Using``, older NCCL's
    # only sign of it), and names the one it chose (``Using network Socket``, ``Using network IB``)
    sockets = events.filter((kind == "nccl.net_socket") | ((kind == "nccl.using_network") & network.str.contains("Socket")))
    rdma = events.filter((kind == "nccl.using_network") & ~network.str.contains("Socket") & (network != ""))
    # with neither shown, the unread error is most often a transport that did not start (plugins and devices are
    # what rules do not read; run-time failures of a working transport are)
    return "ib_fabric" if rdma.height and not sockets.height else "ib_fallback"
