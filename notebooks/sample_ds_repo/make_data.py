"""Writes data/raw/sales.csv: a made-up export of 360 orders, messy the way real exports are.

Run once with a fixed seed; the CSV is committed and treated as raw data (never edited by hand).
Mess on purpose: region names in several spellings and cases, prices as text with '$' or a decimal comma,
missing unit counts, dates with '-' or '/', and a 'returned' column in three dialects.
"""

import csv
import random
from pathlib import Path

SEED = 20240601
ROWS = 360
REGIONS = {
    "North": ["North", "north", " North", "NORTH", "N.", "Nrth"],
    "South": ["South", "south ", "SOUTH", "S."],
    "East": ["East", "east", "E."],
    "West": ["West", "west", "WEST ", "W."],
}
PRODUCTS = {"notebook": 4.5, "pen": 1.2, "stapler": 12.0, "desk lamp": 34.9, "backpack": 49.0}
RETURNED = ["no", "no", "no", "No", "N", "", "yes", "Y"]


def main() -> None:
    rng = random.Random(SEED)
    out = Path(__file__).parent / "data" / "raw" / "sales.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["order_id", "order_date", "region", "product", "units", "unit_price", "returned"])
        for n in range(1, ROWS + 1):
            month, day = rng.randint(1, 6), rng.randint(1, 28)
            sep = rng.choice(["-", "-", "/"])
            region = rng.choice(list(REGIONS))
            product = rng.choice(list(PRODUCTS))
            price = PRODUCTS[product] * rng.choice([1.0, 1.0, 0.9, 1.1])
            price_text = rng.choice([f"{price:.2f}", f"${price:.2f}", f"{price:.2f}".replace(".", ",")])
            units = "" if rng.random() < 0.05 else str(rng.randint(1, 12))
            writer.writerow(
                [
                    f"A{n:04d}",
                    f"2024{sep}{month:02d}{sep}{day:02d}",
                    rng.choice(REGIONS[region]),
                    product,
                    units,
                    price_text,
                    rng.choice(RETURNED),
                ]
            )


if __name__ == "__main__":
    main()
