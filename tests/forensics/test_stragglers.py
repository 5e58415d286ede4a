"""The straggler analysis compares each node with the median of the others: read from one sorted list
(hosts x hosts comparisons took 0.06 s at 512 nodes and grow with the square)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nccllens.analyses.stragglers import typical_of_others


@given(st.dictionaries(st.text(min_size=1, max_size=4), st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=40))
def test_the_others_median_is_the_one_of_the_list_without_the_host(late):
    for host, seconds, typical in typical_of_others(late):
        others = sorted(v for h, v in late.items() if h != host)
        assert (seconds, typical) == (late[host], others[len(others) // 2])


def test_hosts_come_in_order_with_ties():
    # the others of a: [5, 90], whose upper middle (the analysis' choice for an even count) is 90
    assert typical_of_others({"b": 5.0, "a": 5.0, "c": 90.0}) == [("a", 5.0, 90.0), ("b", 5.0, 90.0),
                                                                   ("c", 90.0, 5.0)]
