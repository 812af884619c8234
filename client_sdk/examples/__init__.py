"""Example bots: a random and a greedy one-ply bot, each written twice, against the SDK API
(``random_bot``, ``greedy_bot``) and as course-style packages (``course_random``,
``course_greedy``, which import only ``referee.game``)."""
