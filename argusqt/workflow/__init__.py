"""What each Session action does, one module per menu; `argusqt/session.py` stays the one door
(GUI, batch and API call its methods) and delegates here.

opening (File | Open) → specifying (Specify) → recoding, changing (Modify) → protecting
(Protect) → output (Output). Each function takes the Session it works on first.
"""
