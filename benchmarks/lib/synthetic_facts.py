"""Realistic generated facts for the scale benchmarks, and how their vectors are obtained at 1M.

A fact is a subject ("Maria", "Maria's sister", "the user's landlord") followed by a predicate ("works night shifts
at the hospital in Lyon", "is allergic to peanuts since childhood"); both come from word lists combined at random
with a fixed seed, so every run generates the same store. Queries are questions in the same vocabulary.

Embedding 1M sentences takes ~50 minutes on the 2-core machine, so the store's vectors are *composed*: every
distinct subject and every distinct predicate is embedded for real (a few tens of thousands of sentences), and a
fact's vector is the normalised, token-weighted mean of its subject's and predicate's vectors. MiniLM mean-pools its
token vectors, so this approximates embedding the whole sentence; `composition_fidelity` measures how well (cosine
between the composed vector and the real embedding of the sentence) and the benchmark reports it."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

_NAME_LINES = (
    "Maria Gene Aiko Omar Lena Tomas Priya Kwame Sofia Mateo Ingrid Ravi Chloe Dmitri Fatima Lucas Mei",
    "Jonas Amara Hugo Nadia Felix Yara Elias Zoe Tariq Clara Bruno Leila Anton Ines Kenji Olga Samir",
    "Hana Diego Freya Malik Rosa Viktor Noor Emil Lucia Arjun Greta Pablo Selma Idris Vera Theo",
)
FIRST_NAMES = [name for line in _NAME_LINES for name in line.split()]
# People and animals around a user that facts are about ("Maria K.'s sister ...").
RELATIONS = ["sister", "partner", "manager", "best friend", "dog"]
PREDICATES = {
    "works as a {job} in {city}": None,
    "moved to {city} in {month}": None,
    "is allergic to {food}": None,
    "prefers {food} for dinner on {day}s": None,
    "plays {sport} every {day}": None,
    "is learning {language} for a trip to {city}": None,
    "has a birthday on {month} {date}": None,
    "adopted a {pet} named {name}": None,
    "is training for a {sport} tournament in {month}": None,
    "wants to visit {city} with {name}": None,
    "reads {genre} novels before bed": None,
    "started a new job as a {job} last {month}": None,
    "is saving money for a house in {city}": None,
    "volunteers at the {place} on {day}s": None,
    "dislikes {food} but loves {food2}": None,
    "takes {language} classes at the {place}": None,
    "fixed the {thing} in the kitchen on {day}": None,
    "is worried about the {thing} breaking again": None,
    "bought a new {thing} in {month}": None,
    "celebrated an anniversary in {city} with {name}": None,
    "usually answers emails in {language}": None,
    "had surgery on the {body} in {month}": None,
    "goes hiking near {city} with the {pet}": None,
    "is writing a book about {genre} stories": None,
}
# Comma-separated values of each slot of the predicate templates.
WORDS = {
    "job": "nurse,teacher,software engineer,chef,pilot,accountant,carpenter,lawyer,designer,pharmacist,photographer,"
    "electrician,architect,librarian,dentist,barista,firefighter,journalist",
    "city": "Lyon,Lisbon,Tokyo,Nairobi,Oslo,Toronto,Seville,Hanoi,Denver,Krakow,Porto,Seoul,Austin,Dublin,Bogota,"
    "Munich,Cairo,Perth,Quebec,Valencia",
    "month": "January,February,March,April,May,June,July,August,September,October,November,December",
    "food": "peanuts,shellfish,gluten,mushrooms,spicy curry,sushi,lentils,dairy,strawberries,eggplant,olives",
    "food2": "pasta,ramen,tacos,dumplings,paella,pho,falafel,risotto",
    "day": "Monday,Tuesday,Wednesday,Thursday,Friday,Saturday,Sunday",
    "sport": "tennis,chess,basketball,swimming,climbing,badminton,volleyball,marathon,cycling,squash",
    "language": "Spanish,French,Japanese,Portuguese,Korean,German,Arabic,Italian,Swahili,Polish",
    "date": ",".join(str(d) for d in range(1, 29)),
    "pet": "puppy,kitten,parrot,rabbit,turtle,hamster",
    "name": ",".join(FIRST_NAMES),
    "genre": "mystery,fantasy,science fiction,romance,history,horror,poetry",
    "place": "animal shelter,food bank,library,community garden,hospital,school,museum",
    "thing": "dishwasher,bicycle,laptop,boiler,car,fridge,washing machine,oven,roof",
    "body": "knee,shoulder,back,wrist,ankle",
}
# Appended to a predicate (or not), for variety: the templates alone give a few thousand distinct predicates.
SUFFIXES = (
    "",
    " since last spring",
    " these days",
    " every summer",
    " according to {name}",
    " together with {name}",
    " after a long break",
    " for the first time",
    " on most weekends",
    " since moving to {city}",
    " as of {month}",
    " despite the cost",
    " which surprised {name}",
    " while on holiday in {city}",
    " because of the new job",
    " like their parents did",
)
QUESTIONS = (
    "Where does {subject} work?",
    "What is {subject} allergic to?",
    "When is {subject}'s birthday?",
    "Which sport does {subject} play?",
    "What language is {subject} learning?",
    "What pet does {subject} have?",
    "Where does {subject} want to travel?",
    "What does {subject} like to eat?",
    "What did {subject} buy recently?",
    "Where did {subject} move?",
)


class FactGenerator:
    """Deterministic pools of subjects and predicates, and facts drawn from them."""

    def __init__(self, *, seed: int = 7, predicate_pool: int = 10_000, users_per_agent: int = 1000) -> None:
        self.rng = random.Random(seed)
        self.predicates = self._predicates(predicate_pool)
        self.user_names = [self._full_name(i) for i in range(users_per_agent)]

    def _full_name(self, i: int) -> str:
        return f"{FIRST_NAMES[i % len(FIRST_NAMES)]} {chr(65 + (i // len(FIRST_NAMES)) % 26)}."

    def _predicates(self, n: int) -> list[str]:
        templates = list(PREDICATES)
        seen: set[str] = set()
        out: list[str] = []
        choices = {key: values.split(",") for key, values in WORDS.items()}
        while len(out) < n:
            template = self.rng.choice(templates) + self.rng.choice(SUFFIXES)
            text = template.format(**{key: self.rng.choice(values) for key, values in choices.items()})
            if text not in seen:
                seen.add(text)
                out.append(text)
        return out

    def subjects_for_user(self, user_index: int) -> list[str]:
        """The user, and people and animals around them: "Maria K.", "Maria K.'s sister", ..."""
        name = self.user_names[user_index]
        return [name, *(f"{name}'s {relation}" for relation in RELATIONS)]

    def question(self, subject: str) -> str:
        return self.rng.choice(QUESTIONS).format(subject=subject)


def composed_vectors(
    *,
    subject_vectors: np.ndarray,
    predicate_vectors: np.ndarray,
    subject_tokens: np.ndarray,
    predicate_tokens: np.ndarray,
    pairs: np.ndarray,
) -> np.ndarray:
    """Unit vectors of "subject predicate" sentences from the parts' own embeddings: the token-weighted mean (what
    mean pooling would give without cross-attention between the parts), normalised. pairs: (n, 2) int indices."""
    s, p = pairs[:, 0], pairs[:, 1]
    ws = subject_tokens[s][:, None].astype(np.float32)
    wp = predicate_tokens[p][:, None].astype(np.float32)
    mixed = ws * subject_vectors[s] + wp * predicate_vectors[p]
    return (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)


def composition_fidelity(
    *,
    embed: Callable[[list[str]], np.ndarray],
    sentences: list[str],
    composed: np.ndarray,
) -> dict[str, float]:
    """Cosine between composed vectors and the real embeddings of the same sentences."""
    real = embed(sentences)
    cosines = np.sum(real * composed, axis=1)
    return {"mean": float(cosines.mean()), "p5": float(np.percentile(cosines, 5)), "n": len(sentences)}
