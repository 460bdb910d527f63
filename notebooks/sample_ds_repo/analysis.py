"""Sales analysis for the first half of 2024.

Run `python analysis.py` for the report. explore.ipynb imports the functions below.
"""

import sys

import pandas as pd

RAW = "data/raw/sales.csv"


def revenue_by_region(path=RAW):
    df = pd.read_csv(path, dtype={"unit_price": str, "returned": str})
    # --- cleaning (copied from monthly_revenue, keep in sync!) ---
    df["region"] = df["region"].str.strip().str.title()
    df["region"] = df["region"].replace({"N.": "North", "Nrth": "North", "S.": "South", "E.": "East", "W.": "West"})
    df["unit_price"] = df["unit_price"].str.replace("$", "", regex=False)
    df["unit_price"] = df["unit_price"].str.replace(",", ".", regex=False).astype(float)
    df["units"] = df["units"].fillna(1).astype(int)
    df["returned"] = df["returned"].fillna("no").str.strip().str.lower()
    df = df[df["returned"].isin(["no", "n"])].copy()
    df["revenue"] = df["units"] * df["unit_price"]
    # --- end cleaning ---
    result = df.groupby("region")["revenue"].sum().round(2)
    return result.sort_values(ascending=False)


def monthly_revenue(path=RAW):
    sales = pd.read_csv(path, dtype={"unit_price": str, "returned": str})
    # clean the data
    sales["region"] = sales["region"].str.strip().str.title()
    sales["region"] = sales["region"].replace({"N.": "North", "Nrth": "North", "S.": "South", "E.": "East", "W.": "West"})
    sales["unit_price"] = sales["unit_price"].str.replace("$", "", regex=False)
    sales["unit_price"] = sales["unit_price"].str.replace(",", ".", regex=False).astype(float)
    sales["units"] = sales["units"].fillna(1).astype(int)
    sales["returned"] = sales["returned"].fillna("no").str.strip().str.lower()
    sales = sales[sales["returned"].isin(["no", "n"])].copy()
    sales["revenue"] = sales["units"] * sales["unit_price"]
    sales["order_date"] = pd.to_datetime(sales["order_date"].str.replace("/", "-"), format="%Y-%m-%d")
    sales["month"] = sales["order_date"].dt.to_period("M").astype(str)
    table = sales.pivot_table(index="month", columns="region", values="revenue", aggfunc="sum", fill_value=0)
    return table.round(2)


def top_products(path=RAW, n=3):
    data = pd.read_csv(path, dtype={"unit_price": str, "returned": str})
    data["region"] = data["region"].str.strip().str.title()
    data["region"] = data["region"].replace({"N.": "North", "Nrth": "North", "S.": "South", "E.": "East", "W.": "West"})
    data["unit_price"] = data["unit_price"].str.replace("$", "", regex=False)
    data["unit_price"] = data["unit_price"].str.replace(",", ".", regex=False).astype(float)
    data["units"] = data["units"].fillna(1).astype(int)
    data["returned"] = data["returned"].fillna("no").str.strip().str.lower()
    data = data[data["returned"].isin(["no", "n"])].copy()
    data["revenue"] = data["units"] * data["unit_price"]
    best = data.groupby("product").agg(units=("units", "sum"), revenue=("revenue", "sum"))
    best["revenue"] = best["revenue"].round(2)
    return best.sort_values("revenue", ascending=False).head(n)


def return_rate(path=RAW):
    raw = pd.read_csv(path, dtype={"unit_price": str, "returned": str})
    raw["region"] = raw["region"].str.strip().str.title()
    raw["region"] = raw["region"].replace({"N.": "North", "Nrth": "North", "S.": "South", "E.": "East", "W.": "West"})
    raw["returned"] = raw["returned"].fillna("no").str.strip().str.lower()
    raw["is_return"] = raw["returned"].isin(["yes", "y"])
    return raw.groupby("region")["is_return"].mean().round(3)


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else RAW
    print("Revenue by region\n", revenue_by_region(path), "\n")
    print("Monthly revenue\n", monthly_revenue(path), "\n")
    print("Top products\n", top_products(path), "\n")
    print("Return rate by region\n", return_rate(path))
