#!/usr/bin/python3
"""Write a corpus of short English stories from a grammar of our own.

    /usr/bin/python3 gen_corpus.py --seed 1 --out work/corpus.txt --mb 30

Format: a story is one or more paragraphs, one paragraph per line; stories are separated by one
blank line. The text is plain ASCII.

Every story is drawn from one random.Random: the training corpus from Random(seed), the
held-out file (heldout.txt beside --out, about --heldout-kb KB) from Random(seed + HELDOUT_OFFSET),
so the two are independent draws and the same seed always gives the same bytes. Nothing here
iterates over a set or a dict whose order could change between runs.

The stories are built so that a model needs memory longer than one attention window: a hero,
a friend and an object are introduced in the first lines and named again at the end, a hundred
or more tokens later.
"""

import argparse
import os
import random
import sys

HELDOUT_OFFSET = 1_000_003

# ---------------------------------------------------------------------------------------------
# Word lists. Tuples, not sets, so that every choice is made in a fixed order.

GIRL_NAMES = (
    "Lily", "Mia", "Emma", "Sara", "Anna", "Lucy", "Ella", "Zoe", "Ruby", "Maya", "Nora", "Ivy",
    "Rosa", "Hana", "Lena", "Clara", "Alice", "Daisy", "Grace", "Julia", "Kate", "Molly", "Nina",
    "Olive", "Pia", "Rita", "Sophie", "Tess", "Una", "Vera", "Wendy", "Amy", "Bella", "Cora",
    "Dora", "Eva", "Fay", "Gina", "Holly", "Iris", "Jade", "Kira", "Lola", "Mira", "Nell", "Opal",
    "Penny", "Queenie", "Rose", "Stella", "Tina", "Violet", "Willa", "Yara", "Zara", "Abby",
    "Beth", "Chloe", "Dina", "Elsa", "Flora", "Greta", "Hazel", "Isla", "June", "Kitty", "Luna",
    "Mabel", "Nadia", "Pearl", "Rina", "Sally", "Tara", "Lottie", "Amara", "Leila", "Suki",
    "Mei", "Anya", "Freya", "Gemma", "Hattie", "Ines", "Jenny", "Kim", "Lara", "Mara", "Noor",
    "Poppy", "Rhea", "Sienna", "Thea", "Wren", "Ada", "Bea", "Cleo", "Edie", "Fern", "Goldie",
)
BOY_NAMES = (
    "Tom", "Max", "Ben", "Sam", "Leo", "Jack", "Finn", "Noah", "Owen", "Luke", "Adam", "Eli",
    "Hugo", "Ivan", "Jonah", "Kai", "Liam", "Milo", "Nico", "Oscar", "Pete", "Ravi", "Seth",
    "Theo", "Umar", "Victor", "Will", "Xander", "Yusuf", "Zack", "Alfie", "Billy", "Carlos",
    "Dan", "Ethan", "Felix", "George", "Harry", "Isaac", "Jamie", "Kevin", "Louis", "Mark",
    "Ned", "Otto", "Paul", "Quinn", "Rob", "Simon", "Tim", "Toby", "Vince", "Walter", "Arlo",
    "Bruno", "Cody", "Dylan", "Eddie", "Frank", "Gus", "Henry", "Jasper", "Kofi", "Lenny",
    "Marco", "Nate", "Ollie", "Pablo", "Rory", "Stan", "Teddy", "Arun", "Basil", "Cyrus",
    "Diego", "Emil", "Fred", "Gabe", "Hector", "Igor", "Joel", "Kenji", "Lars", "Moses",
    "Nils", "Omar", "Percy", "Rafi", "Sol", "Timo", "Ugo", "Wally", "Yuri", "Ari", "Bo", "Dex",
)
# (noun, pronoun set): the animals a story can be about.
ANIMALS = (
    "cat", "dog", "rabbit", "bear", "fox", "owl", "mouse", "duck", "frog", "squirrel", "pig",
    "goat", "lamb", "hen", "turtle", "hedgehog", "deer", "puppy", "kitten", "bird", "horse",
    "cow", "lion", "tiger", "elephant", "monkey", "bee", "penguin", "seal", "badger", "otter",
    "dragon", "robot", "giraffe", "zebra", "panda", "whale", "crab", "snail", "beaver",
)
PERSON_KINDS_GIRL = ("girl",)
PERSON_KINDS_BOY = ("boy",)
CHAR_ADJS = (
    "kind", "happy", "curious", "brave", "shy", "little", "clever", "friendly", "gentle",
    "funny", "quiet", "busy", "cheerful", "silly", "smart", "playful", "careful", "lively",
    "small", "sleepy", "bold", "polite", "proud", "helpful", "young", "tiny", "big", "fast",
)
LIKES = (
    "to paint pictures", "to sing songs", "to climb trees", "to read books", "to run fast",
    "to dance", "to play ball", "to look at the stars", "to collect shells", "to bake cakes",
    "to build things", "to draw", "to swim", "to jump in puddles", "to fly kites",
    "to pick flowers", "to tell jokes", "to play hide and seek", "to ride a bike",
    "to count the clouds", "to help others", "to plant seeds", "to make music",
    "to watch the birds", "to explore", "to splash in the river", "to eat apples",
)
COLORS = ("red", "blue", "green", "yellow", "pink", "purple", "orange", "white", "black",
          "brown", "gold", "silver", "gray")
OBJECTS = (
    # (noun, can be lost outside, is small)
    ("ball", True), ("kite", True), ("hat", True), ("box", True), ("toy boat", True),
    ("book", True), ("map", True), ("shell", True), ("key", True), ("lantern", True),
    ("scarf", True), ("cup", True), ("drum", True), ("doll", True), ("toy car", True),
    ("button", True), ("ring", True), ("bell", True), ("blanket", False), ("basket", True),
    ("pencil", True), ("teddy bear", True), ("marble", True), ("feather", True), ("stone", True),
    ("whistle", True), ("crown", True), ("flag", True), ("sock", True), ("spoon", True),
    ("umbrella", True), ("backpack", True), ("jar", True), ("bucket", True), ("flute", True),
)
OBJ_ADJS = ("shiny", "old", "new", "small", "big", "pretty", "soft", "round", "little",
            "special", "favorite", "sparkly", "tiny", "lovely")
PLACES = (
    # (name, preposition for being there)
    ("park", "in the park"), ("forest", "in the forest"), ("garden", "in the garden"),
    ("beach", "on the beach"), ("meadow", "in the meadow"), ("river", "by the river"),
    ("hill", "on the hill"), ("library", "at the library"), ("farm", "on the farm"),
    ("school", "at school"), ("lake", "by the lake"), ("market", "at the market"),
    ("playground", "at the playground"), ("woods", "in the woods"), ("field", "in the field"),
    ("pond", "by the pond"), ("zoo", "at the zoo"), ("bakery", "at the bakery"),
    ("harbor", "at the harbor"), ("orchard", "in the orchard"), ("cave", "in the cave"),
    ("valley", "in the valley"), ("castle", "at the castle"), ("island", "on the island"),
)
HOMES = ("a small house", "a big house", "a little cottage", "a tall tower", "a cozy hut",
         "a blue house", "a house by the sea", "a farmhouse", "a busy town", "a quiet village",
         "a hole under a tree", "a nest in an old oak", "a red barn", "a flat in the city")
LATER = ("A few days later", "The next week", "Some time later", "The next summer", "Another day",
         "A week later", "Not long after", "Later that year", "The day after")
TIMES = ("One day", "One morning", "One sunny day", "One afternoon", "One evening",
         "On a rainy day", "One cold morning", "One warm afternoon", "Early one morning",
         "On Saturday", "One windy day", "Last summer", "One snowy day", "After lunch")
WEATHER = ("The sun was shining.", "The sky was blue and clear.", "It was a warm day.",
           "A soft wind was blowing.", "There were big white clouds in the sky.",
           "The air was cool and fresh.", "Birds were singing in the trees.",
           "It had rained in the night, and the grass was wet.", "The leaves were falling.",
           "Snow covered the ground.", "The flowers were out.", "It was very hot.")
HIDING = ("under a bush", "behind a big rock", "in a pile of leaves", "next to the old well",
          "under a bench", "in the tall grass", "by the gate", "in a hole in a tree",
          "under the bridge", "near the water", "on top of a wall", "inside an empty pot",
          "between two roots", "in a bird's nest", "under the stairs", "in the sand")
GAMES = ("tag", "hide and seek", "catch", "a game of pretend", "jump rope", "leapfrog",
         "a guessing game", "with blocks", "with a ball", "treasure hunt", "follow the leader")
FOODS = ("apples", "cookies", "bread", "soup", "cake", "pie", "sandwiches", "berries",
         "carrots", "pancakes", "honey", "cheese", "plums", "nuts", "muffins", "grapes")
RELATIVES = (("Mom", "she"), ("Dad", "he"), ("Grandma", "she"), ("Grandpa", "he"),
             ("Aunt May", "she"), ("Uncle Joe", "he"))
TRIP_PLACES = (
    ("the beach", ("waves", "crabs", "boats", "seagulls", "a lighthouse", "shells")),
    ("the zoo", ("lions", "monkeys", "a tall giraffe", "penguins", "a sleepy bear", "parrots")),
    ("the mountains", ("snow", "a waterfall", "goats", "tall pine trees", "an eagle", "a lake")),
    ("the city", ("tall buildings", "a big bus", "a fountain", "a toy shop", "a train", "lights")),
    ("the lake", ("ducks", "a wooden boat", "fish", "a little dock", "frogs", "swans")),
    ("the farm", ("cows", "pigs", "a red tractor", "chickens", "horses", "a big barn")),
    ("the fair", ("a big wheel", "balloons", "a clown", "sweets", "a carousel", "music")),
    ("the museum", ("old bones", "paintings", "a dinosaur", "a rocket", "gold coins", "statues")),
)
FEARS = (("the dark", "dark"), ("thunder", "loud"), ("the big dog next door", "big"),
         ("deep water", "deep"), ("the tall slide", "tall"), ("the old bridge", "old"),
         ("bees", "buzzing"), ("the first day of school", "new"))
MAKES = (
    ("a cake", "bake", "The cake fell flat in the middle", "They added more eggs and tried again"),
    ("a sandcastle", "build", "A wave washed half of it away",
     "They built a wall of sand to keep the water out"),
    ("a garden", "plant", "The seeds did not grow for many days",
     "They watered the soil every morning and waited"),
    ("a kite", "make", "The kite would not fly", "They gave it a longer tail"),
    ("a tree house", "build", "A board broke", "They found a stronger board"),
    ("a snowman", "build", "The head kept falling off", "They made the body bigger"),
    ("a puppet show", "put on", "The curtain fell down", "They tied it up with string"),
    ("a soup", "cook", "The soup was too salty", "They added water and potatoes"),
    ("a boat", "build", "The boat leaked", "They filled the holes with wax"),
    ("a song", "write", "They could not find the last line", "They sang it to the birds"),
)
TROUBLES = (
    ("was stuck up a tree", "climbed up and helped {o} down", "tree"),
    ("had hurt {p} leg", "helped {o} walk home slowly", "leg"),
    ("could not find the way home", "showed {o} the way home", "way"),
    ("had a box that was too heavy", "helped {o} carry it", "box"),
    ("had a kite caught in a tree", "used a long stick to get it down", "kite"),
    ("had fallen into the mud", "pulled {o} out", "mud"),
    ("had dropped {p} apples all over the road", "helped {o} pick them up", "apples"),
    ("was cold and wet from the rain", "gave {o} a warm blanket", "rain"),
)
SAY_PLAIN = ("said", "said", "said", "whispered", "replied", "told them", "added")
HAPPY = ("happy", "glad", "very happy", "so happy", "excited", "proud", "thankful", "joyful")
SAD = ("sad", "very sad", "upset", "worried", "unhappy", "lonely", "scared")
ANGRY = ("angry", "cross", "grumpy", "mad", "upset")


class Char:
    """A character: a name, what it is, and its pronouns."""

    def __init__(self, name, kind, fem, adj):
        self.name, self.kind, self.adj = name, kind, adj
        self.he, self.him, self.his = ("she", "her", "her") if fem else ("he", "him", "his")
        self.He, self.His = self.he.capitalize(), self.his.capitalize()


def a_an(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


def cap(s):
    return s[0].upper() + s[1:]


class Story:
    """One story being written: the random stream and helpers that pick from it."""

    def __init__(self, rng):
        self.r = rng
        self.used = []
        self.c = self.f = None
        self.episode = 0
        self.named = []

    def cast(self):
        """The hero and the friend, the same ones in every episode of the story."""
        if self.c is None:
            self.c, self.f = self.char(), self.char()
        return self.c, self.f

    def who(self, f):
        """A character's name, with what it is the first time the story names it."""
        if f.name in self.named:
            return f.name
        self.named.append(f.name)
        return "%s named %s" % (a_an(f.kind), f.name)

    def opening(self, c, f=None):
        """The introduction, only in the first episode."""
        if self.episode:
            return []
        self.named.append(c.name)
        if f is not None:
            self.named.append(f.name)
        return [self.intro(c)] + ([self.friend_intro(c, f)] if f is not None else [])

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def chance(self, p):
        return self.r.random() < p

    def char(self, animal=None):
        r = self.r
        fem = r.random() < 0.5
        while True:
            name = self.pick(GIRL_NAMES if fem else BOY_NAMES)
            if name not in self.used:
                break
        self.used.append(name)
        if animal is None:
            animal = r.random() < 0.35
        if animal:
            kind = self.pick(ANIMALS)
        else:
            kind = self.pick(PERSON_KINDS_GIRL if fem else PERSON_KINDS_BOY)
        return Char(name, kind, fem, self.pick(CHAR_ADJS))

    def thing(self):
        noun, _ = self.pick(OBJECTS)
        if self.chance(0.6):
            return self.pick(COLORS) + " " + noun, noun
        return self.pick(OBJ_ADJS) + " " + noun, noun

    def place(self):
        return self.pick(PLACES)

    def say(self, who, words):
        """A quoted line with its speaker, in one of several orders and verbs that fit it."""
        end = words[-1] if words[-1] in ".?!" else "."
        words = words.rstrip(".?!")
        if end == "?":
            verb = self.pick(("asked", "asked", "wondered", "said"))
        elif end == "!":
            verb = self.pick(("cried", "shouted", "said", "called", "laughed"))
        else:
            verb = self.pick(SAY_PLAIN)
        tail = end if end in "?!" else ","
        r = self.r.randrange(6)
        if r == 0:
            return '"%s%s" %s %s.' % (words, tail, verb, who)
        if r == 1:
            return '"%s%s" %s %s.' % (words, tail, who, verb)
        if r == 2:
            return '%s %s, "%s%s"' % (cap(who), verb, words, end)
        if r == 3:
            return '%s looked at %s and %s, "%s%s"' % (cap(who), self.pick(("them", "the sky", "the ground")), verb, words, end)
        if r == 4:
            return '"%s%s" %s %s softly.' % (words, tail, who, verb) if end != "!" else '"%s!" %s %s loudly.' % (words, who, verb)
        return '"%s%s" %s %s with a smile.' % (words, tail, who, verb) if end != "?" else '"%s?" %s %s.' % (words, who, verb)

    # --- openings ---------------------------------------------------------------------------

    def intro(self, c):
        r = self.r.randrange(8)
        kind = c.adj + " " + c.kind
        if r == 0:
            s = "Once upon a time, there was %s named %s." % (a_an(kind), c.name)
        elif r == 1:
            s = "Once upon a time, %s called %s lived in %s." % (a_an(kind), c.name, self.pick(HOMES))
        elif r == 2:
            s = "There once was %s named %s." % (a_an(kind), c.name)
        elif r == 3:
            s = "%s was %s who lived in %s." % (c.name, a_an(kind), self.pick(HOMES))
        elif r == 4:
            s = "Long ago, in %s, there lived %s named %s." % (self.pick(HOMES), a_an(kind), c.name)
        elif r == 5:
            s = "Once upon a time, in %s, there was %s. %s name was %s." % (
                self.pick(HOMES), a_an(kind), c.His, c.name)
        elif r == 6:
            s = "Once there was %s. Everyone called %s %s." % (a_an(kind), c.him, c.name)
        else:
            s = "Once upon a time, there lived %s named %s." % (a_an(kind), c.name)
        if self.chance(0.75):
            s += " " + self.pick((
                "%s loved %s." % (c.He, self.pick(LIKES)),
                "%s liked %s more than anything." % (c.He, self.pick(LIKES)),
                "Every day, %s wanted %s." % (c.he, self.pick(LIKES)),
                "%s was always %s." % (c.He, self.pick(("smiling", "busy", "laughing", "curious",
                                                          "on the move", "singing"))),
                "%s had many friends." % c.He,
            ))
        return s

    def friend_intro(self, c, f):
        return self.pick((
            "%s had a friend named %s. %s was %s." % (c.name, f.name, f.name, a_an(f.adj + " " + f.kind)),
            "%s best friend was %s, %s." % (c.His, f.name, a_an(f.adj + " " + f.kind)),
            "%s often played with %s, %s who lived nearby." % (c.He, f.name, a_an(f.kind)),
            "%s and %s, %s, were good friends." % (c.name, f.name, a_an(f.kind)),
        ))

    def time_and_weather(self):
        s = self.pick(TIMES if self.episode == 0 else LATER) + ", "
        return s, (self.pick(WEATHER) if self.chance(0.5) else "")

    # --- endings ----------------------------------------------------------------------------

    def moral(self, c, f, topic):
        return self.pick((
            "%s learned that %s." % (c.name, topic),
            "From that day on, %s knew that %s." % (c.name, topic),
            "%s and %s learned that %s." % (c.name, f.name, topic),
            "It was a day %s would always remember." % c.name,
            "%s smiled. It had been a good day." % c.name,
            "That night, %s went to bed with a big smile." % c.name,
        ))

    # --- plots ------------------------------------------------------------------------------

    def plot_lost(self):
        c, f = self.cast()
        full, noun = self.thing()
        pname, at = self.place()
        when, weather = self.time_and_weather()
        p1 = self.opening(c)
        p1.append(self.pick((
            "%s had %s. It was %s favorite thing in the world." % (c.He, a_an(full), c.his),
            "%s had %s that %s got from %s." % (c.He, a_an(full), c.he, self.pick(("Grandma", "Grandpa", "Mom", "Dad", "a friend"))),
            "%s always carried %s with %s." % (c.He, a_an(full), c.him),
        )))
        p2 = ["%s%s took the %s %s." % (when, c.name, noun, self.pick(("and went out to play", "to the " + pname, "outside")))]
        if weather:
            p2.append(weather)
        p2.append(self.pick((
            "%s played %s for a long time." % (c.He, at),
            "%s ran and jumped %s." % (c.He, at),
            "%s met %s %s, and they played %s." % (c.He, f.name, at, self.pick(GAMES)),
        )))
        p2.append(self.pick((
            "When it was time to go home, %s looked for the %s, but it was gone!" % (c.name, noun),
            "Then %s saw that the %s was not in %s hand anymore." % (c.name, noun, c.his),
            "Suddenly, %s could not find %s %s." % (c.name, c.his, full),
        )))
        p2.append("%s felt %s." % (c.name, self.pick(SAD)))
        p2.append(self.say(c.name, self.pick(("Where is my %s?" % noun, "Oh no, I lost my %s!" % noun,
                                              "I have to find my %s!" % noun))))
        p3 = []
        p3.append(self.pick((
            "%s came over. %s saw that %s was %s." % (cap(self.who(f)), f.He, c.name, self.pick(SAD)),
            "Just then, %s came by." % f.name,
            "%s heard %s and came to help." % (f.name, c.name),
        )))
        p3.append(self.say(f.name, self.pick(("Don't worry, I will help you look.", "We can find it together!",
                                              "What is wrong, %s?" % c.name, "Let's look for it together."))))
        spots = [self.pick(HIDING) for _ in range(3)]
        p3.append("They looked %s. They looked %s. But the %s was not there." % (spots[0], spots[1], noun))
        if self.chance(0.5):
            p3.append("%s wanted to cry." % c.name)
        p3.append(self.pick((
            "Then %s saw something %s %s." % (f.name, self.pick(("shiny", "bright", "small")), spots[2]),
            "At last, %s found it %s!" % (f.name, spots[2]),
            "%s had an idea. %s looked %s, and there it was!" % (f.name, f.He, spots[2]),
        )))
        p3.append(self.say(f.name, self.pick(("Here it is!", "I found it!", "Look, %s!" % c.name))))
        p4 = ["%s was %s to have %s %s back." % (c.name, self.pick(HAPPY), c.his, full)]
        p4.append(self.pick((
            "%s gave %s a big hug." % (c.name, f.name),
            self.say(c.name, "Thank you, %s!" % f.name),
            "%s thanked %s again and again." % (c.name, f.name),
        )))
        p4.append(self.pick((
            "After that day, %s always kept the %s safe, and %s and %s were best friends." % (c.name, noun, c.name, f.name),
            "%s never forgot how %s helped %s find the %s." % (c.name, f.name, c.him, noun),
            "From then on, %s held the %s tight whenever %s went %s." % (c.name, noun, c.he, at.split(" ")[0] + " the " + pname if at.startswith(("in", "on", "at", "by")) else at),
            self.moral(c, f, "a good friend helps you when you are sad"),
        )))
        return [p1, p2, p3, p4]

    def plot_meet(self):
        c, f = self.cast()
        if self.episode:
            f = self.char()
        pname, at = self.place()
        when, weather = self.time_and_weather()
        game = self.pick(GAMES)
        p1 = self.opening(c)
        p2 = ["%s%s went to the %s." % (when, c.name, pname)]
        if weather:
            p2.append(weather)
        p2.append(self.pick((
            "There %s saw %s sitting all alone." % (c.he, a_an(f.kind)),
            "Near a tree, %s saw %s %s that %s did not know." % (c.he, a_an(f.adj), f.kind, c.he),
            "%s saw a new %s there. The %s looked %s." % (c.He, f.kind, f.kind, self.pick(SAD)),
        )))
        p2.append(self.say(c.name, self.pick(("Hello! What is your name?", "Hi! Who are you?",
                                              "Why are you alone?", "Do you want to play with me?"))))
        p2.append(self.say("the " + f.kind, self.pick(("My name is %s. I am new here." % f.name,
                                                      "I am %s. I have no friends here." % f.name,
                                                      "I am %s. I just moved to this place." % f.name))))
        p3 = [self.pick((
            "%s smiled. \"Let's play %s!\"" % (c.name, game),
            "%s asked %s to play %s." % (c.name, f.name, game),
            "So %s and %s played %s." % (c.name, f.name, game),
        ))]
        p3.append(self.pick((
            "They laughed and ran all around the %s." % pname,
            "They had so much fun that they forgot the time.",
            "%s was very good at it, and %s clapped." % (f.name, c.name),
            "%s fell down once, but %s helped %s up." % (f.name, c.name, f.him),
        )))
        if self.chance(0.6):
            food = self.pick(FOODS)
            p3.append("Later, %s shared some %s with %s." % (c.name, food, f.name))
            p3.append(self.say(f.name, self.pick(("Thank you! These %s are very good." % food,
                                                  "You are so kind, %s." % c.name))))
        p4 = []
        p4.append(self.pick((
            "When the sun went down, %s had to go home." % f.name,
            "Soon it was time to go home.",
            "In the evening, %s's %s called %s home." % (c.name, self.pick(("mom", "dad", "grandma")), c.him),
        )))
        p4.append(self.say(f.name, "Will you come back tomorrow, %s?" % c.name))
        p4.append(self.say(c.name, self.pick(("Yes, I will!", "Of course, %s!" % f.name, "Every day!"))))
        p4.append(self.pick((
            "From that day on, %s and %s met %s every day." % (c.name, f.name, at),
            "%s and %s became best friends." % (c.name, f.name),
            "%s was not lonely anymore, because now %s had a friend named %s." % (f.name, f.he, c.name),
            self.moral(c, f, "a new friend can be found anywhere"),
        )))
        return [p1, p2, p3, p4]

    def plot_help(self):
        c, f = self.cast()
        pname, at = self.place()
        when, weather = self.time_and_weather()
        trouble, fix, key = self.pick(TROUBLES)
        p1 = self.opening(c)
        if self.chance(0.5):
            p1.append("%s was %s. Everyone knew %s would help anyone." % (c.name, self.pick(("kind", "helpful", "good")), c.he))
        p2 = ["%s%s was walking %s." % (when, c.name, at)]
        if weather:
            p2.append(weather)
        p2.append("%s saw %s. %s %s." % (c.He, self.who(f), f.name, trouble.format(p=f.his, o=f.him)))
        p2.append(self.say(f.name, self.pick(("Help! Can someone help me?", "Oh no, what do I do?",
                                              "Please help me!"))))
        p3 = [self.pick((
            "%s did not think twice." % c.name,
            "%s wanted to help." % c.name,
            "%s stopped. %s knew what to do." % (c.name, c.He),
        ))]
        p3.append("%s %s." % (c.He, fix.format(o=f.him, p=f.his)))
        if self.chance(0.5):
            p3.append(self.pick((
                "It was not easy, and it took a long time.",
                "It was hard work, but %s did not give up." % c.name,
                "%s was a little scared, but %s kept going." % (c.name, c.he),
            )))
        p3.append("%s was %s." % (f.name, self.pick(HAPPY)))
        p3.append(self.say(f.name, self.pick(("Thank you, %s! You are very kind." % c.name,
                                              "Thank you so much!", "You saved me, %s!" % c.name))))
        p4 = []
        if self.chance(0.6):
            full, noun = self.thing()
            p4.append("The next day, %s came to see %s. %s had a gift: %s." % (f.name, c.name, f.He, a_an(full)))
            p4.append(self.say(f.name, "This is for you, because you helped me."))
            p4.append("%s loved the %s." % (c.name, noun))
        p4.append(self.pick((
            "%s felt warm inside. Helping %s had made %s day." % (c.name, f.name, c.his),
            self.moral(c, f, "helping others makes you happy too"),
            "%s and %s have been friends ever since." % (c.name, f.name),
        )))
        return [p1, p2, p3, p4]

    def plot_trip(self):
        c, f = self.cast()
        rel, rel_he = self.pick(RELATIVES)
        where, sights = self.pick(TRIP_PLACES)
        seen = self.r.sample(sights, 3)
        when, weather = self.time_and_weather()
        p1 = self.opening(c, f)
        p2 = ["%s%s said, \"Today we are going to %s!\"" % (when, rel, where)]
        p2.append("%s was so %s that %s jumped up and down." % (c.name, self.pick(("excited", "happy", "glad")), c.he))
        if self.chance(0.5):
            p2.append(self.say(c.name, "Can %s come too?" % f.name))
            p2.append("%s said yes, so %s came along." % (rel, f.name))
            together = True
        else:
            p2.append("%s wanted to tell %s all about it later." % (c.He, f.name))
            together = False
        p3 = ["At %s, %s saw %s, %s and %s." % (where, c.name, seen[0], seen[1], seen[2])]
        p3.append(self.pick((
            "%s liked the %s best." % (c.He, seen[0].split(" ")[-1]),
            self.say(c.name, "Look at that, %s!" % rel),
            "%s took a picture of everything." % c.He,
        )))
        inc = self.r.randrange(3)
        if inc == 0:
            p3.append("Then it started to rain. %s and %s ran under a big tree and laughed." % (c.name, rel))
        elif inc == 1:
            p3.append("Then %s lost %s hat in the wind. %s ran after it and caught it." % (c.name, c.his, rel))
        else:
            food = self.pick(FOODS)
            p3.append("At noon they sat down and ate %s. %s said it was the best lunch ever." % (food, c.name))
        p4 = ["When they got home, %s was very tired." % c.name]
        if together:
            p4.append("%s and %s talked about %s all evening." % (c.name, f.name, where))
        else:
            p4.append("The next day, %s told %s all about the %s." % (c.name, f.name, seen[1].split(" ")[-1]))
            p4.append(self.say(f.name, "I want to go there too!"))
            p4.append(self.say(c.name, "Next time, you can come with us, %s." % f.name))
        p4.append(self.pick((
            "%s hoped they would go back to %s soon." % (c.name, where),
            "It was the best day of the summer.",
            "That night, %s dreamed about %s." % (c.name, seen[2]),
        )))
        return [p1, p2, p3, p4]

    def plot_quarrel(self):
        c, f = self.cast()
        full, noun = self.thing()
        pname, at = self.place()
        when, weather = self.time_and_weather()
        p1 = self.opening(c, f)
        p2 = ["%s%s and %s were playing %s." % (when, c.name, f.name, at)]
        if weather:
            p2.append(weather)
        p2.append("They found %s. Both of them wanted it." % a_an(full))
        p2.append(self.say(c.name, self.pick(("It is mine! I saw it first!", "Give it to me!", "I want the %s!" % noun))))
        p2.append(self.say(f.name, self.pick(("No, it is mine!", "I had it first!", "You always get everything!"))))
        p2.append(self.pick((
            "They pulled and pulled, and the %s fell in the mud." % noun,
            "They shouted at each other. Then %s ran away." % f.name,
            "%s grabbed the %s, and %s went home %s." % (c.name, noun, f.name, self.pick(ANGRY)),
        )))
        p3 = ["That evening, %s sat alone. %s did not feel %s at all." % (c.name, c.He, self.pick(HAPPY))]
        p3.append(self.pick((
            "%s missed %s." % (c.He, f.name),
            "Playing alone was not fun without %s." % f.name,
            "%s thought about what %s had said." % (c.He, c.he),
        )))
        p3.append("At the same time, %s was %s too." % (f.name, self.pick(SAD)))
        p4 = [self.pick((
            "The next morning, %s went to %s's house." % (c.name, f.name),
            "The next day, %s saw %s %s." % (c.name, f.name, at),
        ))]
        p4.append(self.say(c.name, self.pick(("I am sorry, %s. We can share the %s." % (f.name, noun),
                                              "I am sorry. I was not nice to you.",
                                              "Let's not fight. You can have the %s first." % noun))))
        p4.append(self.say(f.name, self.pick(("I am sorry too, %s." % c.name, "Let's play together again.",
                                              "Thank you. I missed you."))))
        p4.append(self.pick((
            "They took turns with the %s, and it was more fun that way." % noun,
            "They played together with the %s until the sun went down." % noun,
            "%s and %s hugged, and they were friends again." % (c.name, f.name),
        )))
        p4.append(self.pick((
            self.moral(c, f, "sharing is better than fighting"),
            "%s and %s never fought about the %s again." % (c.name, f.name, noun),
            "%s learned that saying sorry can fix a lot." % c.name,
        )))
        return [p1, p2, p3, p4]

    def plot_fear(self):
        c, f = self.cast()
        fear, fadj = self.pick(FEARS)
        rel, rel_he = self.pick(RELATIVES)
        p1 = self.opening(c)
        p1.append("But %s was afraid of %s." % (c.name, fear))
        p1.append(self.pick((
            "Whenever %s thought about it, %s felt %s." % (c.he, c.he, self.pick(SAD)),
            "%s did not tell anyone." % c.He,
            "%s wished %s could be brave." % (c.He, c.he),
        )))
        when, _ = self.time_and_weather()
        p2 = [when + "%s had to face %s." % (c.name, fear)]
        p2.append(self.say(c.name, "I can't do it. It is too %s!" % fadj))
        p2.append(self.pick((
            "%s came and sat next to %s." % (rel, c.name),
            "%s, %s friend, was there." % (f.name, c.his),
        )))
        helper = rel if p2[-1].startswith(rel) else f.name
        p2.append(self.say(helper, self.pick(("Being brave does not mean you are not scared.",
                                             "I will stay with you, %s." % c.name,
                                             "Let's count to three together.",
                                             "You are braver than you think, %s." % c.name))))
        p3 = ["%s took a deep breath." % c.name]
        p3.append(self.pick((
            "One, two, three! And %s did it." % c.he,
            "Step by step, %s went on." % c.he,
            "%s held %s's hand and did not look back." % (c.He, helper),
        )))
        p3.append("It was not so %s after all." % fadj)
        p3.append("%s felt %s." % (c.name, self.pick(("proud", "very proud", "brave", "strong"))))
        p4 = [self.say(c.name, "I did it, %s!" % helper)]
        p4.append(self.pick((
            "%s smiled at %s." % (helper, c.name),
            "%s gave %s a hug." % (helper, c.name),
        )))
        p4.append(self.pick((
            "After that, %s was never afraid of %s again." % (c.name, fear),
            "%s learned that being brave means trying even when you are scared." % c.name,
            "Now %s helps other %ss who are afraid of %s." % (c.name, c.kind.split(" ")[-1], fear),
        )))
        return [p1, p2, p3, p4]

    def plot_make(self):
        c, f = self.cast()
        what, verb, problem, fix = self.pick(MAKES)
        when, weather = self.time_and_weather()
        p1 = self.opening(c, f)
        p2 = ["%s%s and %s wanted to %s %s." % (when, c.name, f.name, verb, what)]
        if weather:
            p2.append(weather)
        p2.append(self.say(c.name, "Let's %s the best %s ever!" % (verb, what.split(" ", 1)[1])))
        p2.append(self.pick((
            "%s got everything they needed." % f.name,
            "They worked hard all morning.",
            "%s had a plan, and %s helped." % (c.name, f.name),
        )))
        p3 = ["But then something went wrong. %s." % problem]
        p3.append(self.say(f.name, self.pick(("Oh no! What do we do now?", "It is ruined!", "Maybe we should stop."))))
        p3.append(self.say(c.name, self.pick(("Don't give up, %s. We can fix it." % f.name,
                                              "Let's try one more time.", "I have an idea!"))))
        p3.append("%s." % fix)
        p4 = [self.pick((
            "At last, %s was ready. It was beautiful." % what,
            "This time it worked!",
            "In the end, %s was even better than before." % what,
        ))]
        p4.append("%s and %s were %s." % (c.name, f.name, self.pick(HAPPY)))
        if self.chance(0.6):
            p4.append(self.pick((
                "They showed it to everyone, and everyone clapped.",
                "%s's mom said it was the best %s she had ever seen." % (c.name, what.split(" ", 1)[1]),
            )))
        p4.append(self.pick((
            self.moral(c, f, "if you keep trying, you can fix almost anything"),
            "%s and %s decided to %s something new every week." % (c.name, f.name, verb),
            "%s said to %s, \"We make a good team.\"" % (c.name, f.name),
        )))
        return [p1, p2, p3, p4]

    def plot_gift(self):
        c, f = self.cast()
        full, noun = self.thing()
        p1 = self.opening(c, f)
        p2 = ["Soon it would be %s's birthday." % f.name]
        p2.append("%s wanted to give %s a present, but %s had no money." % (c.name, f.name, c.he))
        p2.append(self.say(c.name, self.pick(("What can I give %s?" % f.name, "I want to make something special.",
                                              "I will make a gift myself!"))))
        p2.append(self.pick((
            "%s remembered that %s liked %s." % (c.name, f.name, self.pick(LIKES)),
            "%s thought and thought." % c.name,
        )))
        made = self.pick(("a card with a big heart on it", "a necklace of %s beads" % self.pick(COLORS),
                          "a picture of the two of them", "a little box painted %s" % self.pick(COLORS),
                          "a song", "a cake with %s on top" % self.pick(FOODS), "a crown of flowers"))
        p3 = ["So %s made %s. It took %s all day." % (c.name, made, c.him)]
        p3.append(self.pick((
            "%s worked very carefully." % c.He,
            "%s's %s helped a little." % (c.name, self.pick(("mom", "dad", "sister", "brother"))),
            "Once %s made a mistake and had to start again." % c.he,
        )))
        p4 = ["On the birthday, %s gave %s the gift." % (c.name, f.name)]
        if self.chance(0.5):
            p4.append("Other friends brought toys, and one gave %s %s." % (f.name, a_an(full)))
        p4.append(self.pick((
            "%s loved it more than anything." % f.name,
            "%s's eyes went wide." % f.name,
            "%s hugged %s tight." % (f.name, c.name),
        )))
        p4.append(self.say(f.name, self.pick(("This is the best gift of all, %s!" % c.name,
                                              "You made this for me?", "Thank you, %s!" % c.name))))
        p4.append(self.pick((
            self.moral(c, f, "the best gifts come from the heart"),
            "%s kept the gift by %s bed for many years." % (f.name, f.his),
            "%s was %s, because %s friend was happy." % (c.name, self.pick(HAPPY), c.his),
        )))
        return [p1, p2, p3, p4]


PLOTS = ("plot_lost", "plot_meet", "plot_help", "plot_trip", "plot_quarrel", "plot_fear",
         "plot_make", "plot_gift")


def story(rng):
    """One story as a string: paragraphs joined by single newlines. A story is one to three
    episodes with the same hero and friend, so their names come back far from where they
    were introduced."""
    s = Story(rng)
    u = rng.random()
    n_ep = 1 if u < 0.4 else (2 if u < 0.85 else 3)
    plots = rng.sample(PLOTS, n_ep)
    out = []
    for e, name in enumerate(plots):
        s.episode = e
        for i, p in enumerate(getattr(s, name)()):
            text = " ".join(x for x in p if x)
            if not text:
                continue
            # Sometimes merge paragraphs, so breaks are not always in the same places.
            if out and i and rng.random() < 0.25:
                out[-1] += " " + text
            else:
                out.append(text)
    return "\n".join(out)


def write_stories(path, rng, nbytes):
    """Write stories from rng until the file holds at least nbytes; return the count."""
    n = 0
    size = 0
    with open(path, "w", encoding="ascii", newline="\n") as fp:
        while size < nbytes:
            t = story(rng)
            if n:
                t = "\n\n" + t
            fp.write(t)
            size += len(t)
            n += 1
        fp.write("\n")
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="corpus.txt")
    ap.add_argument("--mb", type=float, default=30.0, help="corpus size in MB (10^6 bytes)")
    ap.add_argument("--heldout-kb", type=float, default=40.0)
    a = ap.parse_args()
    n = write_stories(a.out, random.Random(a.seed), int(a.mb * 1e6))
    held = os.path.join(os.path.dirname(os.path.abspath(a.out)), "heldout.txt")
    m = write_stories(held, random.Random(a.seed + HELDOUT_OFFSET), int(a.heldout_kb * 1e3))
    print("%s: %d stories; %s: %d stories" % (a.out, n, held, m), file=sys.stderr)


if __name__ == "__main__":
    main()
