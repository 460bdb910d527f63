"""A tiny shop-cart library used by the architect-nb demos."""

from shop.cart import Cart, Item

__all__ = ["Cart", "Item"]
