from __future__ import annotations

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base


class StoreGeneration(Base):
    """One counter per kind of draft input (``service.generations.service.KINDS``).

    Triggers created by migration 0008 bump it in the same transaction as every insert,
    update or delete of the tables of its kind, whoever writes them; a row deleted by hand
    comes back with a new ``epoch`` at the next write, so a counter never repeats a value
    it had before."""

    __tablename__ = "store_generations"

    name: Mapped[str] = mapped_column(String(50), primary_key=True)
    value: Mapped[int] = mapped_column(BigInteger)
    epoch: Mapped[str] = mapped_column(String(32))
