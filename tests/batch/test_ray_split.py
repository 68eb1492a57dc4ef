"""How `paicli batch --ray` splits its workers over the cluster's nodes: one actor per node
(never more actors than workers), the workers as evenly as can be."""

from __future__ import annotations

from paicli.batch.ray_run import split_workers


def test_one_actor_per_node_holds_its_share_of_the_workers() -> None:
    assert split_workers(4, 1) == [4]
    assert split_workers(4, 2) == [2, 2]
    assert split_workers(5, 2) == [3, 2]
    assert split_workers(2, 8) == [1, 1]  # no actor without a worker
    assert split_workers(3, 0) == [3]  # no node told its CPUs: one actor, Ray places it
