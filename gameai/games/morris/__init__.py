"""The morris family: Three Men's Morris and its variants, games whose pieces move."""
