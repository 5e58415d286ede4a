"""kernel family: every timestamp/prefix style, Xid of every era, and the host-side messages.

Lines are real (fixtures/public/kernel_*, whose SOURCE.md cites the public thread, or quoted in
shared/reference/dmesg_xid.md, marked "ref") unless marked ``# synthetic``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl

from nccllens.parse import kernel
from nccllens.parse.base import FileContext, Line

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "public"
XID79 = "NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."  # ref §2.1


def fixture_lines(relpath: str) -> list[str]:
    return (FIXTURES / relpath).read_text(encoding="utf-8").split("\n")


def run(texts: list[str]) -> list[dict]:
    """Parse ``texts`` as one file like the pipeline does; checks PREFILTER keeps every parsed line."""
    lines = [Line(file="k.log", line=i + 1, raw=s, message=s, row=i) for i, s in enumerate(texts)]
    keep = pl.Series(texts, dtype=pl.String).str.contains(kernel.PREFILTER).to_list()
    ctx = FileContext(path="k.log", year=2026)
    kept = {ln.line for ln, k in zip(lines, keep, strict=True) if k}
    for e in kernel.parse(lines, ctx):
        assert e["line"] in kept, f"PREFILTER drops a line the parser reads: {e['raw']!r}"
    events = list(kernel.parse([ln for ln in lines if ln.line in kept], ctx))
    for e in events:
        assert e["family"] == "kernel" and e["kind"].startswith("kernel."), e
    return events


def one(text: str) -> dict:
    events = run([text])
    assert len(events) == 1, events
    return events[0]


# --- prefixes and timestamps -------------------------------------------------------------------

def test_dmesg_boot_seconds_and_ctime():
    e = one("[155044.078590] NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.")  # ref §2.1, old era
    assert (e["ts_kind"], e["ts_rel"], "ts" in e) == ("boot", 155044.07859, False)
    e = run(fixture_lines("kernel_gpu/dmesg_ctime_xid43_31_94_uuid_lines.log"))[-1]
    assert (e["ts"], e["ts_kind"]) == (datetime(2024, 8, 9, 13, 32, 56), "absolute")
    e = next(e for e in run(fixture_lines("kernel_gpu/dmesg_ctime_xid43_31_94_uuid_lines.log")) if e.get("xid") == 31)
    assert e["ts"] == datetime(2024, 8, 5, 3, 54, 13)  # space-padded day 'Aug  5'


def test_dmesg_iso_comma_decimals_and_decode_prefix():
    events = run(fixture_lines("kernel_host/dmesg_iso_oom_killer.log"))
    assert events[0]["ts"] == datetime(2024, 4, 29, 12, 55, 41, 678628)  # 14:55:41+02:00, in UTC (issue 19)
    (e,) = run(fixture_lines("kernel_gpu/dmesg_decode_iso_sxid12028.log"))
    assert (e["kind"], e["xid"], e["ts"]) == ("kernel.sxid", 12028, datetime(2025, 1, 25, 10, 34, 54, 859532))
    assert e["message"].startswith("nvidia-nvswitch1: SXid")


def test_kmsg_raw_record():
    # synthetic: built from /dev/kmsg "prio,seq,usec_monotonic,flags;msg" (ref §1)
    e = one("3,1234,4254197860,-;" + XID79)
    assert (e["kind"], e["ts_kind"], e["ts_rel"], e["xid"]) == ("kernel.xid", "boot", 4254.19786, 79)


def test_journalctl_short_precise_iso_and_monotonic():
    # synthetic: built from journalctl -o short "%b %d %H:%M:%S host kernel: " (ref §1)
    e = one("Nov 22 03:12:05 gpu-node-7 kernel: " + XID79)
    assert (e["host"], e["ts"], e["ts_kind"]) == ("gpu-node-7", datetime(2026, 11, 22, 3, 12, 5), "no_year")
    # synthetic: built from -o short-precise "%b %d %H:%M:%S.%f host kernel: " (ref §1)
    assert one("Nov 22 03:12:05.123456 gpu-node-7 kernel: " + XID79)["ts"].microsecond == 123456
    # synthetic: built from -o short-iso, old "+0000" and new "+00:00" offsets (ref §1)
    for stamp in ("2026-11-22T03:12:05+0000", "2026-11-22T03:12:05+00:00"):
        e = one(f"{stamp} gpu-node-7 kernel: " + XID79)
        assert (e["host"], e["ts"], e["ts_kind"]) == ("gpu-node-7", datetime(2026, 11, 22, 3, 12, 5), "absolute")
    # synthetic: built from -o short-monotonic "[%5lu.%06lu] host kernel: " (ref §1)
    e = one("[ 4254.197860] gpu-node-7 kernel: " + XID79)
    assert (e["host"], e["ts_rel"], e["ts_kind"]) == ("gpu-node-7", 4254.19786, "boot")


def test_rsyslog_kern_log_and_rfc3339():
    e = run(fixture_lines("kernel_host/syslog_kern_cgroup_oom_python3.log"))[0]
    assert (e["host"], e["ts"], e["ts_kind"], e["ts_rel"]) == (
        "ubuntu-s-1vcpu-2gb-ams3-01", datetime(2026, 5, 15, 23, 9, 27), "no_year", 514.682838)
    # synthetic: built from rsyslog RFC 3339 "%Y-%m-%dT%H:%M:%S.%f%z host kernel: " (ref §1)
    e = one("2023-06-10T12:34:56.789012+02:00 gpu-node-7 kernel: " + XID79)
    assert (e["host"], e["ts"]) == ("gpu-node-7", datetime(2023, 6, 10, 10, 34, 56, 789012))  # UTC (issue 19)


def test_talosctl_and_journal_grep_and_reltime():
    events = run(fixture_lines("kernel_gpu/talosctl_dmesg_sxid_xid45_74_154_119_a100.log"))
    assert events[0]["ts"] == datetime(2026, 4, 22, 21, 25, 20, 458998)
    xid45 = [e for e in run(fixture_lines("kernel_gpu/journal_grep_xid45_caused_by_nvlink5_xid149_145.log"))]
    assert {e["xid"] for e in xid45} == {45} and xid45[0]["message"].startswith("NVRM: Xid")
    aer = run(fixture_lines("kernel_host/dmesg_human_reltime_pcie_aer_corrected.log"))
    assert aer and all("ts" not in e and "ts_rel" not in e for e in aer)  # '[  +0.000316]' is a delta, not a time


# --- NVIDIA driver ------------------------------------------------------------------------------

def test_xid_every_era():
    e = one(XID79)
    assert (e["xid"], e["pci"], e["level"], "pid" in e, "value" in e) == (79, "0000:5d:00", "critical", False, False)
    e = run(fixture_lines("kernel_gpu/dmesg_ctime_xid13_xid109.log"))[-1]
    assert (e["xid"], e["pid"], e["value"], e["pci"]) == (109, 1797828, "pt_main_thread", "0000:cb:00")
    assert e["detail"] == "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005"
    quoted = run(fixture_lines("kernel_gpu/reference_quoted_xid_lines.log"))
    middle = next(e for e in quoted if e.get("xid") == 63)
    assert (middle["pid"], middle["detail"]) == (1896, "Row Remapper: New row marked for remapping, reset gpu to "
                                                       "activate.")
    mig = next(e for e in quoted if e.get("xid") == 94)
    assert (mig["key"], mig["pid"], mig["pci"]) == ("GPU-I:05", 7194, "0000:01:00")
    assert one("NVRM: Xid (0000:03:00): 14, Channel 00000001")["pci"] == "0000:03:00"  # ref §2.1, very old (gpud test)
    assert one("NVRM: Xid (PCI:0000:3f:00): 46")["xid"] == 46  # ref §2.1, no trailing text (NVSentinel test)
    # synthetic: built from "NVRM: Xid (PCI:%04x:%02x:%02x GPU-I:%02u GPU-CI:%02u): %d, pid=%s, name=%s, %s"
    e = one("NVRM: Xid (PCI:0000:41:00 GPU-I:02 GPU-CI:01): 31, pid=4242, name=python, MMU Fault")
    assert (e["key"], e["xid"], e["value"]) == ("GPU-I:02 GPU-CI:01", 31, "python")


def test_uuid_fallen_off_bus_and_other_nvrm_lines():
    e = run(fixture_lines("kernel_gpu/dmesg_ctime_xid43_31_94_uuid_lines.log"))[1]
    assert (e["kind"], e["pci"], e["value"]) == ("kernel.gpu_uuid", "0000:00:05", "GPU-efbdfde9-5798-a6e7-4c46-12518fa15375")
    old = one("NVRM: GPU at 0000:01:00.0 has fallen off the bus.")  # ref §2.2 (2014-2017 pastes)
    new = one("NVRM: GPU 0000:5d:00.0: GPU has fallen off the bus.")  # ref §2.2
    assert [(x["kind"], x["pci"], x["level"]) for x in (old, new)] == [
        ("kernel.fallen_off_bus", "0000:01:00", "critical"), ("kernel.fallen_off_bus", "0000:5d:00", "critical")]
    events = run(fixture_lines("kernel_gpu/dmesg_fallen_off_bus_multiline_no_xid.log"))
    (fell,) = [e for e in events if e["kind"] == "kernel.fallen_off_bus"]
    assert (fell["pci"], fell["line"]) == ("0000:b3:00", 3)
    driver = [e["version"] for e in events if "version" in e]
    assert driver == ["driver 570.158.01"]


def test_sxid_fatal_and_follow_up():
    e = one("[131453.740743] nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 20034, Fatal, Link 30 LTSSM Fault Up")  # ref
    assert (e["kind"], e["xid"], e["value"], e["level"], e["detail"]) == (
        "kernel.sxid", 20034, "Fatal", "critical", "Link 30 LTSSM Fault Up")
    follow = run(fixture_lines("kernel_gpu/talosctl_dmesg_sxid_xid45_74_154_119_a100.log"))[1]
    assert (follow["xid"], follow["level"], follow["pci"]) == (24007, "warning", "0000:aa:00")


# --- host side ---------------------------------------------------------------------------------

def test_oom_killer_every_line():
    events = run(fixture_lines("kernel_host/dmesg_iso_oom_killer.log"))
    assert [(e["key"], e.get("pid"), e["value"]) for e in events] == [
        ("invoked", None, "pool"), ("constraint", 1440763, "perl"), ("killed", 1440763, "perl"),
        ("reaped", 1440763, "perl")]
    assert events[2]["level"] == "error" and events[1]["detail"] == "CONSTRAINT_NONE"
    cg = run(fixture_lines("kernel_host/syslog_kern_cgroup_oom_python3.log"))[0]
    assert (cg["pid"], cg["value"], cg["detail"]) == (15617, "python3", "Memory cgroup out of memory")
    legacy = run(fixture_lines("kernel_host/dmesg_ctime_legacy_cgroup_oom_k8s_pod.log"))
    assert [(e["key"], e["pid"]) for e in legacy if e["key"] in ("selected", "killed")] == [
        ("selected", 24572), ("killed", 28438)]


def test_aer_ecc_segfault_hung_task():
    aer = run(fixture_lines("kernel_host/dmesg_human_reltime_pcie_aer_corrected.log"))[0]
    assert (aer["kind"], aer["pci"], aer["value"], aer["level"]) == ("kernel.aer", "0000:00:03", "Corrected", "warning")
    e = one("pcieport 0000:00:1c.0: AER: Multiple Uncorrectable (Non-Fatal) error message received from 0000:73:00.1")
    assert (e["pci"], e["value"], e["level"]) == ("0000:73:00.1", "Uncorrectable (Non-Fatal)", "error")  # ref §2.4
    assert one("pcieport 0000:00:1c.0: DPC: containment event, status:0x1f01: unmasked uncorrectable error "
               "detected")["level"] == "critical"  # ref §2.4
    # linux Documentation/firmware-guide/acpi/apei/einj.rst example output
    e = one("[22716.616173] EDAC MC3: 1 CE memory read error on CPU_SrcID#0_Channel#0_DIMM#0 (channel:0 slot:0 "
            "page:0x12345 offset:0x0 grain:32 syndrome:0x0 -  area:DRAM err_code:0001:0090 socket:0 channel_mask:1 rank:0)")
    assert (e["kind"], e["value"], e["level"]) == ("kernel.ecc", "CE", "warning")
    # synthetic: built from edac_mc "%d %s memory read error on %s" with UE
    assert one("EDAC MC0: 1 UE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0")["level"] == "critical"
    e = one("pt_main_thread[2536443]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp 00007f7c12fd7c30 error 4 in "
            "libnccl.so.2[7f7c7ac00000+d3d3000]")  # ref §2.6
    assert (e["kind"], e["pid"], e["value"], e["detail"]) == ("kernel.segfault", 2536443, "pt_main_thread", "libnccl.so.2")
    assert one("traps: python[1234] general protection fault ip:7f1 sp:7ff error:0 in libc.so.6[7f0+195000]")["pid"] == 1234
    e = one("INFO: task cache_mgr_event:620917 blocked for more than 120 seconds.")  # ref §2.7
    assert (e["kind"], e["pid"], e["value"], e["timeout_ms"]) == ("kernel.hung_task", 620917, "cache_mgr_event", 120000)
    e = one("watchdog: BUG: soft lockup - CPU#18 stuck for 27s! [python3:2254956]")  # ref §2.7
    assert (e["kind"], e["pid"], e["key"]) == ("kernel.hung_task", 2254956, "soft_lockup")


def test_link_changes_and_boot_anchor():
    e = one("mlx5_core 0000:5e:00.0 enp94s0np0: Link down")  # ref §2.8
    assert (e["kind"], e["iface"], e["value"], e["pci"]) == ("kernel.ib_link", "enp94s0np0", "down", "0000:5e:00")
    e = one("Nov 22 03:12:05 host systemd-networkd[1234]: ib0: Lost carrier")  # ref §2.8 (syslog, not kernel)
    assert (e["kind"], e["iface"], e["value"], e["host"]) == ("kernel.ib_link", "ib0", "down", "host")
    # synthetic: built from linux_banner "Linux version %s (%s@%s) (%s) %s", 5.15
    e = one("[    0.000000] Linux version 5.15.0-97-generic (buildd@lcy02-amd64-102) (gcc 11.4.0) #107-Ubuntu SMP")
    assert (e["kind"], e["version"], e["ts_rel"]) == ("kernel.boot", "kernel 5.15.0-97-generic", 0.0)
