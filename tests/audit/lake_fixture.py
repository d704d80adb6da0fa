"""A small data lake of our own in KramaBench's layout, with a workload over it.

Binary formats (Excel, Parquet) are written at test time, so the repository
holds no generated binaries. `build_lake(root)` returns the workload path.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd

STATES = ["California", "Oregon", "Washington", "Nevada", "Arizona"]
ABBR = ["CA", "OR", "WA", "NV", "AZ"]


def build_lake(root: Path) -> Path:
    """Write the lake under `root/lake` and the workload to `root/workload.json`."""
    lake = root / "lake"
    for d in ("wildfires", "climate", "stations", "population", "air", "misc"):
        (lake / d).mkdir(parents=True, exist_ok=True)
    acres = pd.DataFrame(
        {
            "State": [s for s in ABBR for _ in (2019, 2020)],
            "Year": [y for _ in ABBR for y in (2019, 2020)],
            "AcresBurned": [
                259_823,
                4_304_379,
                280_000,
                1_141_613,
                169_000,
                842_370,
                90_000,
                120_000,
                980_000,
                978_519,
            ],
        }
    )
    acres.to_csv(lake / "wildfires/nifc_acres_burned_by_state.csv", index=False)
    with pd.ExcelWriter(lake / "wildfires/fire_causes_2020.xlsx") as xl:
        pd.DataFrame({"region": ABBR, "fires": [8000, 2000, 1500, 600, 1800]}).to_excel(
            xl, sheet_name="Human caused", index=False
        )
        pd.DataFrame({"region": ABBR, "fires": [1400, 500, 300, 200, 700]}).to_excel(
            xl, sheet_name="Lightning", index=False
        )
    (lake / "wildfires/largest_fires.html").write_text(
        "<html><body><h1>Season summary</h1><table><caption>Largest wildfires of 2020</caption>"
        "<tr><th>Fire</th><th>Acres</th></tr><tr><td>August Complex</td><td>1032648</td></tr>"
        "<tr><td>SCU Lightning Complex</td><td>396624</td></tr></table></body></html>",
        encoding="utf-8",
    )
    pd.DataFrame(
        {
            "station_id": ["USW1", "USW1", "USW2", "USW2", "USW3", "USW3"],
            "month": ["2020-06", "2020-07"] * 3,
            "temp_c": [21.0, 24.5, 18.0, 22.0, 25.0, 29.5],
        }
    ).to_csv(lake / "climate/noaa_monthly_temperature.tsv", sep="\t", index=False)
    con = duckdb.connect()
    con.execute(
        "COPY (SELECT * FROM (VALUES (2009, 387.4), (2010, 389.9), (2011, 391.7)) "
        "t(year, co2_ppm)) TO ? (FORMAT parquet)",
        [str(lake / "climate/mauna_loa_co2.parquet")],
    )
    con.close()
    (lake / "climate/sea_level_notes.md").write_text(
        "# Global mean sea level\n\nSatellite altimetry since 1993 shows the global mean sea "
        "level rising by 3.3 millimetres per year.\n",
        encoding="utf-8",
    )
    json.dump(
        [
            {"station_id": "USW1", "name": "Sacramento Exec", "state": "CA", "elevation_m": 7},
            {"station_id": "USW2", "name": "Flagstaff Pulliam", "state": "AZ", "elevation_m": 2135},
            {"station_id": "USW3", "name": "Phoenix Sky Harbor", "state": "AZ", "elevation_m": 337},
        ],
        (lake / "stations/weather_stations.json").open("w"),
    )
    pd.DataFrame(
        {"state": STATES, "population": [39_538_223, 4_237_256, 7_705_281, 3_104_614, 7_151_502]}
    ).to_csv(lake / "population/us_state_population_2020.csv", index=False)
    pd.DataFrame({"abbr": ABBR, "name": STATES}).to_csv(
        lake / "population/state_abbreviations.csv", index=False
    )
    pd.DataFrame(
        {
            "date": ["2020-09-01", "2020-09-02", "2020-09-03", "2020-09-01"],
            "county": ["Los Angeles", "Los Angeles", "Los Angeles", "Maricopa"],
            "pm25": [40.1, 12.0, 55.3, 9.0],
        }
    ).to_csv(lake / "air/epa_pm25_daily.csv", index=False)
    (lake / "air/aqi_readme.txt").write_text(
        "Air quality index breakpoints used by the EPA.\n", encoding="utf-8"
    )
    pd.DataFrame({"sku": ["a1", "b2"], "qty": [3, 4]}).to_csv(
        lake / "misc/inventory.csv", index=False
    )
    with pd.ExcelWriter(lake / "misc/employees.xlsx") as xl:
        pd.DataFrame({"employee": ["Ann"], "dept": ["ops"]}).to_excel(xl, index=False)
    (lake / "misc/readme.md").write_text("Internal files, not part of any study.\n")
    (lake / "misc/broken.json").write_text("{not json")

    tasks = [
        _task(
            "env-1",
            "What was the total number of acres burned by wildfires in California in 2020?",
            4_304_379,
            "numeric_exact",
            ["nifc_acres_burned_by_state.csv"],
        ),
        _task(
            "env-2",
            "Which state had the most acres burned per resident in 2020? Use the "
            "2020 state population.",
            "Nevada",
            "string_exact",
            [
                "nifc_acres_burned_by_state.csv",
                "us_state_population_2020.csv",
                "state_abbreviations.csv",
            ],
            subtasks=[
                _task(
                    "env-2-1",
                    "How many acres burned in each state in 2020?",
                    None,
                    "list_exact",
                    ["nifc_acres_burned_by_state.csv"],
                ),
                _task(
                    "env-2-2",
                    "Map state abbreviations to state names.",
                    None,
                    "list_exact",
                    ["state_abbreviations.csv"],
                ),
            ],
        ),
        _task(
            "env-3",
            "What share of the fires in 2020 were caused by lightning?",
            0.1771,
            "numeric_approximate",
            ["fire_causes_2020.xlsx"],
        ),
        _task(
            "env-4",
            "What was the average CO2 concentration measured at Mauna Loa in 2010?",
            389.9,
            "numeric_approximate",
            ["mauna_loa_co2.parquet"],
        ),
        _task(
            "env-5",
            "Which weather station at the highest elevation recorded the warmest "
            "July monthly temperature?",
            "Flagstaff Pulliam",
            "string_approximate",
            ["weather_stations.json", "noaa_monthly_temperature.tsv"],
        ),
        _task(
            "env-6",
            "On how many days did PM2.5 exceed 35 in Los Angeles county?",
            2,
            "numeric_exact",
            ["epa_pm25_daily.csv"],
        ),
        _task(
            "env-7",
            "Name the largest wildfire of 2020.",
            "August Complex",
            "string_exact",
            ["largest_fires.html"],
        ),
        _task(
            "env-8",
            "By how many millimetres per year does the global mean sea level rise?",
            3.3,
            "numeric_exact",
            ["sea_level_notes.md"],
        ),
    ]
    workload = root / "workload.json"
    workload.write_text(json.dumps(tasks, indent=1), encoding="utf-8")
    return workload


def _task(
    tid: str,
    query: str,
    answer: object,
    answer_type: str,
    sources: list[str],
    subtasks: list[dict[str, object]] | None = None,
) -> dict[str, object]:
    return {
        "id": tid,
        "query": query,
        "answer": answer,
        "answer_type": answer_type,
        "data_sources": sources,
        "subtasks": subtasks or [],
    }


if __name__ == "__main__":  # python tests/audit/lake_fixture.py OUT_DIR
    import sys

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    print(build_lake(out))
