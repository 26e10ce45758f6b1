"""mcl.UniqueId in this process: string and pickle round trips, a repr
that keeps the secret out of logs, refusal of garbage. (Ranks joining by
each form of the id: test_lifetime.py.)"""

import pickle

import pytest

import mcl


def test_string_round_trip():
    uid = mcl.UniqueId()
    text = str(uid)
    assert isinstance(text, str) and text
    again = mcl.UniqueId.from_string(text)
    assert again == uid
    assert str(again) == text
    assert hash(again) == hash(uid)


def test_pickle_round_trip():
    uid = mcl.UniqueId()
    again = pickle.loads(pickle.dumps(uid))
    assert isinstance(again, mcl.UniqueId)
    assert again == uid and str(again) == str(uid)


def test_each_id_is_new():
    assert mcl.UniqueId() != mcl.UniqueId()
    assert mcl.UniqueId() != "not an id"


def test_repr_hides_the_secret():
    uid = mcl.UniqueId()
    assert repr(uid) == "<mcl.UniqueId>"
    assert str(uid) not in repr(uid)


@pytest.mark.parametrize("text", ["garbage", "", "mcl:" + "0" * 40])
def test_garbage_is_refused(text):
    with pytest.raises(mcl.InvalidArgumentError):
        mcl.UniqueId.from_string(text)
    with pytest.raises(mcl.InvalidArgumentError):
        mcl.init(0, 2, text)


def test_a_truncated_id_is_refused():
    text = str(mcl.UniqueId())
    with pytest.raises(mcl.InvalidArgumentError):
        mcl.UniqueId.from_string(text[:len(text) // 2])
