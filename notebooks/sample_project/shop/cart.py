"""A shopping cart with a flat discount."""

from dataclasses import dataclass, field


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 1


@dataclass
class Cart:
    items: list[Item] = field(default_factory=list)

    def add(self, item: Item) -> None:
        self.items.append(item)

    def total(self) -> float:
        total = 0
        for item in self.items:
            total = total + item.price * item.quantity
        return total

    def total_with_discount(self, percent: float) -> float:
        return self.total() * (1 - percent / 100)
