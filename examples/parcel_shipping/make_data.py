"""Generate ``data/senders.csv`` and ``data/shipments.csv`` for the parcel-shipping example.

A parcel courier's register of business senders (40 senders, 3 of them signed up late and
not in the register file yet) and the parcels they shipped with it in 2025, some returned.
Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it reproduces
the shipped files byte for byte.

    python examples/parcel_shipping/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260217
N_SHIPMENTS = 1900
N_SENDERS = 40
N_UNLISTED = 3
"""Senders with shipments that the register (senders.csv) does not list."""
RETURN_RATE = 0.09
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

SECTORS = (("Apparel", 0.32), ("Electronics", 0.22), ("Homeware", 0.26), ("Books", 0.20))
CITIES = (("Leeds", 0.30), ("York", 0.22), ("Sheffield", 0.28), ("Hull", 0.20))
ZONES = (("1", 0.35), ("2", 0.30), ("3", 0.22), ("4", 0.13))
PARCELS = {
    "Apparel": ((0.3, 4.0), (20, 260)),
    "Electronics": ((0.5, 12.0), (60, 1400)),
    "Homeware": ((1.0, 24.0), (25, 420)),
    "Books": ((0.4, 9.0), (10, 120)),
}
"""The lowest and highest weight_kg, and declared_value, of a parcel of each sector."""
SENDER_COLUMNS = ("sender_id", "sector", "city")
SHIPMENT_COLUMNS = (
    "shipment_id",
    "shipped_on",
    "sender_id",
    "weight_kg",
    "zone",
    "declared_value",
    "status",
)


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(senders, shipments): the register, and the shipments sorted by date then sender.

    Weights are whole tenths of a kilogram and declared values whole units, so every
    charge of the task's money model (4.00 + 0.90 per kg + 2 % or 3 % of the declared
    value) is a whole number of cents and every rounded total is unambiguous.
    """
    rng = random.Random(seed)
    senders: list[dict[str, object]] = []
    for i in range(N_SENDERS):
        senders.append(
            {
                "sender_id": f"SN-{201 + 2 * i + int(2 * rng.random())}",
                "sector": _pick(rng, SECTORS),
                "city": _pick(rng, CITIES),
            }
        )
    volume = [0.2 + 1.8 * rng.random() ** 2 for _ in senders]
    first = date(2025, 1, 1)
    shipments: list[dict[str, object]] = []
    for _ in range(N_SHIPMENTS):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(senders) - 1:
            x -= volume[k]
            k += 1
        (w_low, w_high), (v_low, v_high) = PARCELS[str(senders[k]["sector"])]
        w, v = rng.random(), rng.random()
        shipments.append(
            {
                "shipment_id": "",
                "shipped_on": (first + timedelta(days=int(365 * rng.random()))).isoformat(),
                "sender_id": senders[k]["sender_id"],
                "weight_kg": f"{round(10 * (w_low + (w_high - w_low) * w * w)) / 10:.1f}",
                "zone": _pick(rng, ZONES),
                "declared_value": f"{round(v_low + (v_high - v_low) * v * v):.2f}",
                "status": "returned" if rng.random() < RETURN_RATE else "delivered",
            }
        )
    shipments.sort(key=lambda t: (str(t["shipped_on"]), str(t["sender_id"])))
    for k, row in enumerate(shipments):
        row["shipment_id"] = f"PX{80001 + k}"
    listed = senders[: N_SENDERS - N_UNLISTED]
    return sorted(listed, key=lambda s: str(s["sender_id"])), shipments


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    senders, shipments = generate()
    paths = (out / "senders.csv", out / "shipments.csv")
    for path, columns, rows in zip(
        paths, (SENDER_COLUMNS, SHIPMENT_COLUMNS), (senders, shipments), strict=True
    ):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return paths


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    for path in write(parser.parse_args().out):
        print(path)
