"""Text helpers the grader relies on."""

from __future__ import annotations

import pytest

from bot.scoring.text import (
    admits_not_knowing,
    detect_language,
    guesses_and_admits,
    is_dont_know,
    mentions,
    opens_with_admission,
    polarity,
    reports_belief,
    split_units,
)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("градиенты копятся в .grad", "ru"),
        ("gradients accumulate in .grad", "en"),
        ("zero_grad() обнуляет grad", "ru"),
        ("", "en"),
    ],
)
def test_detect_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    "text", ["не знаю", "Не знаю(", "I don't know", "idk", "no idea, sorry", "", "???", "хз"]
)
def test_dont_know(text: str) -> None:
    assert is_dont_know(text)


@pytest.mark.parametrize(
    "text",
    [
        "I don't know exactly, but backward() accumulates gradients into .grad of each leaf tensor",
        "zero_grad clears gradients",
    ],
)
def test_real_answers_are_not_dont_know(text: str) -> None:
    assert not is_dont_know(text)


def test_polarity_sees_negation_and_rejection() -> None:
    assert polarity("model.eval() turns off gradients") == 1
    assert polarity("model.eval() does not turn off gradients") == -1
    assert polarity("eval() doesn't disable autograd") == -1
    assert polarity("eval() не отключает градиенты") == -1
    assert polarity("It's a myth that eval() turns off gradients") == -1
    assert polarity("That claim is false: eval() keeps autograd on") == -1
    assert polarity("None of the frozen weights change") == -1


@pytest.mark.parametrize(
    "text",
    [
        "requires_grad=False fully freezes a layer, BatchNorm included",
        "backbone.requires_grad_(False) freezes BatchNorm too",
        "Layers are frozen with p.requires_grad = false on their parameters",
        "After zero_grad() the gradients are None",
        "eval() is the same as train(False)",
        "requires_grad=False полностью замораживает слой",
    ],
)
def test_a_code_literal_is_not_a_negation(text: str) -> None:
    """False and None in code state a value; counting them flipped these sentences' polarity,
    so a wrong claim stated with a literal escaped its flag and a rejection of it did not."""
    assert polarity(text) == 1
    assert polarity(text.replace("freezes", "does not freeze")) == (-1 if "freezes" in text else 1)


def test_split_units_keeps_sentences_clauses_and_whole() -> None:
    text = "eval() switches dropout off. It does not stop autograd, but no_grad does."
    units = split_units(text)
    assert units[0] == "eval() switches dropout off."
    assert "It does not stop autograd," in units[1]
    assert units[-1] == text


def test_a_one_sentence_answer_with_a_contrast_ends_with_the_whole_answer() -> None:
    """The grader reads the last unit as the whole answer and checks every unit before it for
    misconceptions: the sentence's last clause must be among those, not read as the whole."""
    text = "eval() switches dropout off, but it also stops gradient computation."
    units = split_units(text)
    assert units[-1] == text
    assert "but it also stops gradient computation." in units[:-1]
    assert text in units[:-1]  # the sentence itself is checked too
    assert split_units("eval() switches dropout and batch norm off.") == [
        "eval() switches dropout and batch norm off."
    ]


def test_mentions_matches_identifiers_not_substrings() -> None:
    assert mentions("call opt.zero_grad() first", "zero_grad")
    assert mentions("use model.eval()", "model.eval()")
    assert mentions("just call eval() on it", "model.eval()")
    assert not mentions("during training", "self.training")
    assert mentions("read running_mean", "self.running_mean")
    assert not mentions("the gradient is", "grad")


@pytest.mark.parametrize(
    ("text", "admits"),
    [
        ("i'd just do torch.tensor(my_list)... the rest, honestly I don't know", True),
        ("FSDP вроде как DDP, только новее? Не работал с ним", True),
        ("честно не вспомню, что делает retain_graph", True),
        ("never used IterableDataset, only ImageFolder", True),
        (
            "TorchServe... some tool for serving models? Never used it, no idea about the details",
            True,
        ),
        ("про AOTInductor даже не слышал, TensorRT вроде быстрее, но почему — не скажу", True),
        ("I've only used PyTorch, so I can't compare much", True),
        ("heard of log-sum-exp but couldn't explain it right now, sorry", True),
        ("vmap вроде векторизует, а как считать градиенты по примерам — не приходилось", True),
        # "really" between the words, and «не занимался» (blind24, after its read).
        ("I use clip_grad_norm_ sometimes but don't really remember what max_norm means", True),
        ("DistributedSampler? never really looked into it, the template sets it up", True),
        ("про channels_last что-то слышал, но сам этим не занимался", True),
        ("not sure, but zero_grad() clears the old gradients before backward", False),
        ("zero_grad() clears .grad because gradients accumulate across backward calls", False),
        # A long answer that mentions not knowing one detail is still an answer.
        (
            "Dataset needs __len__ and __getitem__, the DataLoader batches and shuffles it, "
            "workers load samples in parallel processes, collate_fn stacks them into a batch "
            "tensor; I don't know IterableDataset",
            False,
        ),
    ],
)
def test_admits_not_knowing(text: str, admits: bool) -> None:
    assert admits_not_knowing(text) is admits


@pytest.mark.parametrize(
    ("text", "reported"),
    [
        ("Многие думают, что clip_grad_norm_ нормирует каждый тензор по отдельности", True),
        ("people sometimes say F is faster than nn modules", True),
        ("A common mistake is to assume Adam with weight_decay is AdamW", True),
        ("Частая ошибка — вызывать scheduler.step() перед optimizer.step()", True),
        ("it's easy to assume x.size() gives the element count", True),
        ("dropout zeroes some of the layer's weights during training", False),
        ("model.eval() turns off gradient computation", False),
        ("многие слои, например dropout, ведут себя по-разному", False),
        ("freeze the backbone with requires_grad=False and train only the head", False),
        ("иначе будет ошибка expected all tensors to be on the same device", False),
        ("so for other inputs the model silently gives wrong output", False),
        ("это миф, что dropout зануляет веса", True),
    ],
)
def test_reports_belief(text: str, reported: bool) -> None:
    assert reports_belief(text) is reported


def test_a_very_long_answer_keeps_the_whole_answer_as_its_last_unit() -> None:
    text = " ".join(f"Sentence number {i} says something." for i in range(80))
    units = split_units(text)
    assert len(units) == 48 and units[-1] == text and units[0].startswith("Sentence number 0")


GUESS = (
    "I think it traces the model into a graph and saves it so that you can load it later "
    "without the Python code, maybe for mobile or C++ serving too."
)


@pytest.mark.parametrize(
    ("text", "opens"),
    [
        # The first sentence says so, and what follows is a guess: capped like a short one.
        (f"Honestly I haven't used torch.export, only torch.compile a little. {GUESS}", True),
        (f"Честно, с FlexAttention не сталкивался. {GUESS}", True),
        # The forms that escaped the rule on content/blind10 ("Not something I've done. …").
        (f"Not something I've done. {GUESS}", True),
        (f"I haven't really used TorchScript. {GUESS}", True),
        (f"I don't really know it. {GUESS}", True),
        (f"Не особо знаю, как это устроено. {GUESS}", True),
        # "really" between the words is not "I know": a plain statement stays an answer.
        (f"I really know this one. {GUESS}", False),
        # Said later, after an answer: not an admission of the whole answer.
        (f"{GUESS} I have never used it in production, though.", False),
        # Too long to be only a guess: a long answer can hold a lot besides "I never used X".
        (f"I never used torch.export myself. {GUESS} {GUESS} {GUESS} {GUESS}", False),
    ],
)
def test_opens_with_admission(text: str, opens: bool) -> None:
    assert opens_with_admission(text) is opens


@pytest.mark.parametrize(
    ("text", "caps"),
    [
        # An admission anywhere, and a guess throughout.
        (
            "Ну, DataLoader вроде грузит данные батчами... Наверное, там есть shuffle? "
            "Остальное не помню.",
            True,
        ),
        ("Hmm, I think pinned memory is maybe some kind of cache? Not sure, never used it.", True),
        # An answer first, one doubt at the end: a partial answer, not a guess.
        (
            "Static graphs are built before running, dynamic ones as the code runs, so debugging "
            "is easier. I think torch.compile changes this, not sure how.",
            False,
        ),
        # Guessing without saying it does not know.
        ("I think it is maybe something like a cache? Probably for speed...", False),
        # Too long to be only a guess.
        (f"Hmm, I think... maybe? Not sure. {GUESS} {GUESS} {GUESS} {GUESS} {GUESS}", False),
        # Softer admissions count with the guesses: "not familiar", "sorry", "I'd have to look".
        (
            "I've seen vmap mentioned, it's like... a vectorized map? I'd probably just loop "
            "over the batch. Not really familiar with torch.func, sorry.",
            True,
        ),
        (
            "LoRA — это что-то вроде адаптеров. Про r и alpha точно не помню, вроде r — это "
            "размер. Как мёржить — не подскажу.",
            True,
        ),
        # "Honestly", "sorry" and "look up" in a good answer that asks itself questions: no
        # admission among them.
        (
            "Why does view fail here? Because after transpose the tensor is not contiguous. What "
            "to do? Call .contiguous() or use reshape. Honestly, reshape is kind of the safe "
            "default.",
            False,
        ),
        (
            "nn.Embedding is basically a lookup table: you look up rows by index. Why not "
            "one-hot? It works, just slower. Probably fine for small vocabularies?",
            False,
        ),
        # Two admissions, no guessing words: a candidate naming the terms it says it never
        # used ("haven't actually used" is one).
        (
            "FSDP shards the parameters across ranks. I haven't actually used it and don't "
            "remember the wrapping policy.",
            True,
        ),
        (
            "Про torch.export слышал, но сам не работал и не помню, чем он отличается от TorchScript.",
            True,
        ),
        # "never written" is an admission too.
        (
            "I've heard of FlexAttention but never written a score_mod for it. Not sure how it "
            "gets compiled, sorry.",
            True,
        ),
        # Two admissions in a long answer: it holds a lot besides them.
        (
            f"I haven't used FSDP and don't remember its wrapping policy. {GUESS} {GUESS} {GUESS} "
            f"{GUESS} {GUESS}",
            False,
        ),
        # One soft admission beside one guess: an answer that is honest about a detail.
        (
            "Honestly the key is that view needs contiguous memory and reshape copies when it "
            "must; I think view never copies.",
            False,
        ),
    ],
)
def test_guesses_and_admits(text: str, caps: bool) -> None:
    assert guesses_and_admits(text) is caps
