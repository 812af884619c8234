from .program import Agent as Agent
