"""Reading lines the way real logs need: CRLF, NULs, invalid UTF-8, ANSI, tqdm redraws, huge lines."""

from __future__ import annotations

from pathlib import Path

from nccllens.parse.lines import HOLD, MAX_LINE, ReadStats, blocks, frame


def _frame(data: bytes):
    stats = ReadStats()
    out = []
    for first, block in blocks([data], stats):
        out.extend(frame(block, first, stats).iter_rows())
    return out, stats


def test_crlf_nul_and_invalid_utf8_are_cleaned_and_reported():
    rows, stats = _frame(b"a\r\nb\x00c\n\xff\xfebad\nlast")
    assert rows == [(1, "a"), (2, "bc"), (3, "\ufffd\ufffdbad"), (4, "last")]
    assert "NUL bytes removed" in stats.notes
    assert "invalid UTF-8 replaced with U+FFFD" in stats.notes


def test_ansi_colours_removed():
    rows, _ = _frame(b"\x1b[31mERROR\x1b[0m something\n")
    assert rows == [(1, "ERROR something")]


def test_tqdm_redraws_split_into_lines_keeping_the_line_number():
    # a tqdm bar redrawn with bare CRs, then a real message glued after the last redraw
    rows, _ = _frame(b"ok\n 10%|#  | 1/10\r 20%|## | 2/10\r[rank0]: Traceback (most recent call last):\n")
    assert rows[0] == (1, "ok")
    assert rows[-1] == (2, "[rank0]: Traceback (most recent call last):")


def test_line_numbers_continue_across_blocks():
    stats = ReadStats()
    got = [(first, block) for first, block in blocks([b"a\nb\nc", b"d\ne\n"], stats)]
    assert [g[0] for g in got] == [1, 3]
    assert got[1][1] == b"cd\ne\n"


def test_a_last_line_without_newline_joins_the_block_before_it():
    # a log cut while it was written: its last line is read with the rest, not as a block of its own
    stats = ReadStats()
    assert list(blocks([b"a\nb\nc"], stats)) == [(1, b"a\nb\nc")]
    assert list(blocks([b"a\nb\n", b"c"], stats)) == [(1, b"a\nb\nc")]
    big = b"x" * HOLD + b"\n"  # a block larger than HOLD is not held back
    assert list(blocks([big + b"c"], stats)) == [(1, big), (2, b"c")]


def test_a_line_without_newline_longer_than_the_cap_is_cut_and_reported():
    stats = ReadStats()
    chunks = [b"x" * (MAX_LINE // 2)] * 4 + [b"\nafter\n"]
    got = list(blocks(chunks, stats))
    assert len(got[0][1]) == MAX_LINE + 1
    assert got[-1][1].endswith(b"after\n")
    assert any("longer than" in n for n in stats.notes)


def test_a_log_pasted_as_a_quote_reads_without_its_quote_marks():
    # https://github.com/modelscope/ms-swift/issues/6107 (fixtures/public/msswift_megatron_2node_ibv_reg_mr_iova2_einval):
    # the reporter quoted the traceback, every line "> [rank10]: ..."
    quoted = (b"> [rank10]:     next(self.gen)\n>\n"
              b"> [rank10]:   File \"/home/shared/conda/lib/python3.11/contextlib.py\", line 144, in __exit__\n"
              b"> [rank10]:     work = group.reduce_scatter_tensor_coalesced(outputs, inputs, reduce_opts)\n")
    rows, stats = _frame(quoted)
    assert [text for _, text in rows][0] == "[rank10]:     next(self.gen)"
    assert all(not text.startswith(">") for _, text in rows)
    assert any("quote marks" in note for note in stats.notes)


def test_a_few_quoted_lines_in_a_log_are_the_logs_own():
    rows, stats = _frame(b"step 1 loss 2.0\n> 0.5 threshold\nstep 2 loss 1.9\nstep 3 loss 1.8\n")
    assert rows[1] == (2, "> 0.5 threshold") and not stats.notes


def test_source_file_names_an_editor_turned_into_links_read_as_text():
    # https://github.com/NVIDIA/nccl/issues/1710: the paste went through an editor that linked "net_ib.cc:101"
    # (.cc is a web domain), so the NCCL WARN prefix had no "FILE:LINE" any more
    line = (b"node201:127799:127863 [0] transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN NET/IB : "
            b"mlx5_0:1 Got async event : local access violation work queue error\n")
    rows, stats = _frame(line)
    assert rows[0][1].startswith("node201:127799:127863 [0] transport/net_ib.cc:101 NCCL WARN NET/IB")
    assert any("links" in note for note in stats.notes)


def test_an_nccl_warn_with_a_linked_source_file_keeps_its_host():
    import polars as pl

    from nccllens.extract import events_from_text

    text = ("node201:127799:127863 [0] transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN NET/IB : "
            "mlx5_0:1 Got async event : local access violation work queue error\n")
    warn = events_from_text(text).filter(pl.col("kind") == "nccl.warn")
    assert warn["host"].to_list() == ["node201"]


def test_a_log_pasted_indented_as_a_whole_reads_from_its_own_start():
    # synthetic: a paste inside a Markdown list item, every line four spaces in; a traceback's own deeper
    # indentation stays
    rows, stats = _frame(b"    Traceback (most recent call last):\n      File \"train.py\", line 3, in <module>\n"
                         b"    RuntimeError: NCCL error\n")
    assert [text for _, text in rows] == ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
                                          "RuntimeError: NCCL error"]
    assert any("indentation" in note for note in stats.notes)


def test_a_log_whose_lines_start_at_their_first_column_keeps_its_indentation():
    rows, stats = _frame(b"Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n")
    assert rows[1][1].startswith("  File") and not stats.notes


def test_crlf_blank_lines_stay_so_records_read_across_them():
    # an Open MPI abort notice pasted from Windows: the blank line between its sentences stays a row, so the
    # reader of the notice sees its "Process name" line in sequence (line numbers do not jump)
    rows, _ = _frame(b"the job to be terminated. The first process to do so was:\r\n\r\n"
                     b"  Process name: [[34453,1],1]\r\n")
    assert rows == [(1, "the job to be terminated. The first process to do so was:"), (2, ""),
                    (3, "  Process name: [[34453,1],1]")]


def test_docker_compose_container_prefixes_are_removed():
    # synthetic: docker compose v2's "name-1  | " before a real line (https://github.com/pytorch/pytorch/issues/116974)
    rows, stats = _frame(b"trainer-1  | WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 222141 "
                         b"closing signal SIGTERM\ntrainer-1  | \ntrainer-1  | done\n")
    assert rows[0][1].startswith("WARNING:torch.distributed.elastic") and rows[2][1] == "done"
    assert any("compose" in note for note in stats.notes)


NEMO = Path(__file__).resolve().parents[1] / "fixtures/public/nemo_asr_rank0_allgather_ahead_of_broadcast_seq532339"


def test_lines_a_terminal_hard_wrapped_are_rejoined_and_keep_their_numbers():
    # https://github.com/NVIDIA-NeMo/Speech/issues/13562 (the paste kept the terminal's wraps at 183 columns)
    data = (NEMO / "train.log").read_bytes()
    rows, stats = _frame(data)
    watchdog = [(n, text) for n, text in rows if "Watchdog caught collective operation timeout" in text]
    assert watchdog and all("ran for" in text and "milliseconds before timing out" in text for _, text in watchdog)
    assert [n for n, _ in rows] == list(range(1, len(rows) + 1))  # the pieces' rows stay, numbered as in the file
    assert any("hard-wrapped at 183" in note for note in stats.notes)


def test_records_that_are_merely_equally_wide_are_not_rejoined():
    # synthetic: one logger's records of one fixed width (the same fields each time), then a shorter one
    record = b"[rank1]:[titan] 2025-08-21 11:19:52,968 - root - INFO - [Validation Debug]  Rank 1 batch 87 Loss 12.2411"
    rows, stats = _frame(record + b"\n" + record + b"\n" + record + b"\n" + record + b"\nshort line\n")
    assert len([text for _, text in rows if text == record.decode()]) == 4 and not stats.notes


def _terminal_wrapped(text: str, width: int) -> bytes:
    """``text`` as a terminal ``width`` columns wide hard-wraps it (each long line cut into pieces)."""
    return "\n".join(line[i:i + width] for line in text.split("\n")
                     for i in range(0, max(len(line), 1), width)).encode()


BASICSR = Path(__file__).resolve().parents[1] / "fixtures/public/basicsr_3rank_allreduce_seq808_enqueued811_timeout"


def test_a_short_paste_whose_cut_records_repeat_is_rejoined():
    # the same three ranks' watchdog records, each cut in three: their pieces start alike as often as the records
    # do, so how lines start after the narrower rows (record heads) tells the cut pieces apart
    text = (BASICSR / "console.log").read_text(encoding="utf-8")
    rows, stats = _frame(_terminal_wrapped(text, 100))
    joined = [t for _, t in rows if "Watchdog caught collective operation timeout" in t]
    assert len(joined) == 3 and all(t.endswith("milliseconds before timing out.") for t in joined)
    assert any("hard-wrapped at 100" in note for note in stats.notes)


NODE_A = Path(__file__).resolve().parents[1] / "fixtures/public/node_b_power_loss/node-a/console.log"


def test_a_record_exactly_as_wide_as_the_terminal_is_not_joined_to_the_next_record():
    # torchrun's launch configuration, one record per key: a record that is exactly 100 characters long (not cut)
    # is followed by the next record, which starts as records start; it stays a line of its own
    text = NODE_A.read_text(encoding="utf-8")
    lines = text.split("\n")
    exact = [line for line in _terminal_wrapped(text, 100).decode().split("\n") if len(line) == 100
             and line in lines]
    assert exact  # the fixture holds such records
    rows, _ = _frame(_terminal_wrapped(text, 100))
    texts = [t for _, t in rows]
    assert all(line in texts for line in exact)
    assert [t for t in texts if t and t != "\x00"] == [line for line in lines if line]


SGLANG_AR = Path(__file__).resolve().parents[1] / "fixtures/public/sglang_bench_latency_tp2_custom_ar_peer_access"


def test_a_message_two_ranks_printed_alike_is_cut_alike_and_still_rejoined():
    # both ranks' custom all-reduce failure, the same text twice: a terminal cuts both at the same column, so the two
    # cut rows end alike; that is no box drawn at a fixed width (its distinct rows would end alike)
    text = (SGLANG_AR / "bench_latency.log").read_text(encoding="utf-8")
    rows, stats = _frame(_terminal_wrapped(text, 100))
    failed = [t for _, t in rows if t.startswith("Failed: Cuda error")]
    assert len(failed) == 2 and all(t.endswith("'peer access is not supported between these two devices'") for t in failed)
    assert any("hard-wrapped at 100" in note for note in stats.notes)


DDP_UNUSED = Path(__file__).resolve().parents[1] / "fixtures/public/ddp_4gpu_rank1_cuda_unspecified_launch_failure_peers_sigkilled"


def test_ranks_copies_of_a_message_cut_alike_behind_their_own_prefixes_are_rejoined():
    # four ranks print DDP's long warning, each behind its own "[rankN]:" prefix: the copies are distinct rows
    # that a terminal cuts at the same column, ending in the same letter; a drawn box ends in a mark, never a letter
    text = (DDP_UNUSED / "stderr.err").read_text(encoding="utf-8")
    rows, stats = _frame(_terminal_wrapped(text, 100))
    assert any("hard-wrapped at 100" in note for note in stats.notes)
    assert any("unspecified launch failure" in t and len(t) > 100 for _, t in rows)


def test_a_drawn_table_as_wide_as_the_terminal_is_not_rejoined():
    # synthetic: nvidia-smi's frame, every row exactly as wide and ending in its right edge
    row = b"| N/A   34C    P0    52W / 400W |      4MiB / 81920MiB |      0%      Default |"
    rows, stats = _frame(b"\n".join([row] * 5 + [b"+-----------+", b"done"]) + b"\n")
    assert [t for _, t in rows][:5] == [row.decode()] * 5 and not stats.notes


NCCL1710 = Path(__file__).resolve().parents[1] / "fixtures/public/nccl1710_cx7_internal_plugin_local_access_violation_status9"


def test_a_wrapped_paste_is_cut_where_the_paste_was_measured_before_links_and_quotes_are_undone():
    # a quoted reply whose editor turned "net_ib.cc:101" into links, then cut by a terminal: the rows' widths as
    # pasted, not after the links are read away, say which rows were cut
    text = (NCCL1710 / "console.log").read_text(encoding="utf-8")
    rows, stats = _frame(_terminal_wrapped(text, 100))
    assert any("hard-wrapped at 100" in note for note in stats.notes)
    events = [t for _, t in rows if "Got async event" in t]
    assert len(events) == 3 and all("node201:" in t and "[net_ib.cc" not in t and t.endswith("work queue error")
                                    for t in events)


# source: https://github.com/NVIDIA/DCGM/issues/304 (fixtures/public/nvls_bind_fail_nvlink_state: one NCCL WARN)
NVLS_WARN = ("[2026-06-23 15:45:07] gpu-stress-dgc86-xfpt6:420:437 [5] transport/nvls.cc:379 (nvlsAllocateMem) NCCL WARN "
             "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot "
             "be performed in the present state'.")


def test_a_short_paste_of_one_line_cut_twice_mid_word_is_rejoined():
    rows, stats = _frame(_terminal_wrapped("NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n" + NVLS_WARN, 100))
    assert [t for _, t in rows if "NCCL WARN" in t] == [NVLS_WARN]
    assert any("hard-wrapped at 100" in note for note in stats.notes)


RETURNN = Path(__file__).resolve().parents[1] / "fixtures/public/returnn_4gpu_hang_gpu_device_handle_lost/train.log"


def test_two_equally_wide_rows_whose_cut_is_not_mid_word_show_no_wrap_width():
    # RETURNN's start-up line was cut (mid-word), the command-line record after it is merely as wide and ends in "]":
    # the "Hostname:" record under it is its own line
    rows, stats = _frame(RETURNN.read_bytes())
    assert any(t == "Hostname: cn-251" for _, t in rows) and not stats.notes


DIFFIR = Path(__file__).resolve().parents[1] / "fixtures/public/diffir_basicsr_2x4090_val_on_rank0_rank1_reduce_timeout"


def test_one_long_line_a_terminal_cut_in_a_short_paste_is_read_whole():
    # https://github.com/Zj-BinXia/DiffIR/issues/39: the watchdog record cut at 159 columns ("millisecond" / "s before
    # timing out."), the only cut line of the paste, so the file shows no wrap width: the record head takes the row
    # after it, which no pattern wanted and which begins no record
    from nccllens.extract import events_from_text

    events = events_from_text((DIFFIR / "rank1_console.log").read_text(encoding="utf-8"))
    watchdog = events.filter(events["kind"] == "torch.watchdog_timeout")["message"].to_list()
    assert len(watchdog) == 1 and watchdog[0].endswith("milliseconds before timing out.")
    assert events["kind"].cast(str).to_list().count("python.traceback") == 1  # the traceback under it is its own


def test_a_long_line_that_ends_in_a_colon_keeps_the_list_under_it():
    # https://github.com/marin-community/levanter/issues/432 (fixtures/public/jax_levanter_multihost_barrier_deadline_
    # exceeded_missing_tasks): "Timed out task names:" then one task per line, not a cut record's tail
    from nccllens.extract import events_from_text

    case = Path(__file__).resolve().parents[1] / "fixtures/public/jax_levanter_multihost_barrier_deadline_exceeded_missing_tasks"
    events = events_from_text((case / "worker.log").read_text(encoding="utf-8"))
    assert events.filter(events["peer"].is_not_null())["peer"].to_list() == ["ranks 0, 3"]


def test_the_widest_line_of_a_short_paste_keeps_the_record_under_it():
    # https://github.com/NVIDIA/semantic-segmentation/issues/33 (fixtures/public/nv_semseg_8gpu_epoch18_cuda_runtime_error39_ecc):
    # the exception ends in a number, "terminate called ..." begins a record of its own: no word was cut in two
    from nccllens.extract import events_from_text

    case = Path(__file__).resolve().parents[1] / "fixtures/public/nv_semseg_8gpu_epoch18_cuda_runtime_error39_ecc"
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(case.glob("*.log")))
    events = events_from_text(text)
    messages = events["message"].to_list()
    assert any(m.endswith("THCCachingHostAllocator.cpp:265") for m in messages if m)
    assert any(m.startswith("terminate called without an active exception") for m in messages if m)
