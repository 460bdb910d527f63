from shop.cart import Cart, Item


def test_total():
    cart = Cart()
    cart.add(Item("apple", 0.5, 4))
    cart.add(Item("pear", 1.25))
    assert cart.total() == 3.25


def test_discount():
    cart = Cart([Item("book", 20.0)])
    assert cart.total_with_discount(10) == 18.0
