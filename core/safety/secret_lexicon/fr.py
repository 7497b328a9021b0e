"""French: "mon mot de passe, c'est ...", "le mdp du wifi", "le code de ma carte bleue", "le cryptogramme",
"le digicode", "pour la question secrète j'ai mis ...", "pour désactiver l'alarme, tape ..."."""

from core.safety.secret_lexicon import Grammar, Language, Names

GRAMMAR = Grammar(
    is_=r"est|était|sera|serait|sont|c['’]est|ce\s+sera|c['’]était|=|:|->|→|reste|il\s+y\s+a|c['’]est\s+écrit",
    to=r"(?:chang\w*|mis|modifi\w*)\s+(?:en|par|à)|en|par|à",
    it_is=r"c['’]est|ce\s+sera|c['’]était|qui\s+est|est",
    article=r"le|la|les|l['’]|un|une",
    of=r"de|du|des|d['’]|pour|à|au|aux|chez",
    now=r"maintenant|désormais|toujours|encore|actuellement|au\s+fait|bien|du\s+coup|svp|a\s+changé",
    as_=r"comme",
    mine=r"(?:mon|ma|mes|ton|ta|son|sa|notre|votre|le|la|l['’])",
    and_=r"et|mais|ou|donc|svp",
    not_values=r"""(?:le|la|les|un|une|mon|ma|ton|ta|son|sa|trop|très|faible|fort|forte|long|longue|court|courte|sûr
        |sûre|sécurisé|facile|difficile|compliqué|compliquée|faux|fausse|erroné|incorrect|correct|nouveau|nouvelle
        |ancien|ancienne|vieux|même|identique|différent|différente|obligatoire|nécessaire|secret|secrète|privé
        |personnel|expiré|périmé|bloqué|changé|modifié|enregistré|noté|oublié|perdu|collé|écrit|bon|mauvais|ce|cela
        |ça|que|de|en|avec|pour|par|sans|pas|ne|oui|non|aussi|encore|déjà|si|comme|quel|quelle|où|quand|toujours
        |jamais|rien|quelque|valide|invalide|temporaire|provisoire|simple|évident|aléatoire|dans|sur|sous|ici|là
        |derrière|dessous|dessus|dedans)""",
    units=r"caractères|lettres|chiffres|symboles|mots|jours|mois|ans|fois",
    digits=r"zéro|zero|un|une|deux|trois|quatre|cinq|six|sept|huit|neuf",
)

LANGUAGE = Language(
    code="fr",
    grammar=GRAMMAR,
    password=Names(
        names=r"mots?\s+de\s+passe|mdps?|password|code\s+(?:du\s+)?wi-?fi|clé\s+(?:wi-?fi|wpa)|clef\s+wi-?fi",
        openers=r"wi-?fi|box|routeur",
        phrases=r"phrases?\s+(?:secrètes?|de\s+passe|de\s+récupération|mnémonique)|mots\s+(?:de\s+récupération|secrets)",
    ),
    pin=Names(
        names=r"""(?:code\s+)?pin|code\s+(?:confidentiel|secret|cb|de\s+cb)|code\s+(?:de|d['’])\s*(?:ma\s+|la\s+|ta\s+|sa
            \s+)?carte(?:\s+bleue|\s+bancaire|\s+de\s+crédit)?|nip|puk|code\s+de\s+déverrouillage"""
    ),
    card_security_code=Names(
        names=r"""cvv2?|cvc2?|cryptogramme(?:\s+visuel)?|code\s+de\s+sécurité|(?:(?:les\s+)?(?:trois|quatre|3|4)\s+)?
            chiffres\s+(?:au\s+dos|derrière|à\s+l['’]arrière)|(?:au\s+)?dos\s+de\s+(?:la|ma)\s+carte|derrière\s+(?:la
            |ma)\s+carte""",
        openers=r"cartes?|carte\s+bleue|cb|visa|mastercard|amex",
        markers=r"code(?:\s+(?:derrière|au\s+dos|de\s+sécurité))?|cryptogramme|cvv|cvc|chiffres(?:\s+au\s+dos|\s+derrière)?",
    ),
    security_answer=Names(
        phrases=r"""questions?\s+(?:secrètes?|de\s+sécurité)|réponses?\s+(?:secrètes?|de\s+sécurité)
            |nom\s+de\s+jeune\s+fille\s+de\s+(?:ma|ta|sa)\s+mère""",
        openers=r"""questions?\s+(?:secrètes?|de\s+sécurité)|nom\s+de\s+jeune\s+fille|(?:si|quand)\s+la\s+banque
            \s+(?:me\s+)?demande|(?:pour|à|dans)\s+(?:la\s+question\s+)?['"‘“«][^'"’”»]{3,60}['"’”»]""",
        markers=r"réponses?|(?:j['’]ai\s+)?(?:mis|répondu|écrit|choisi|donné|indiqué)",
    ),
    one_time_code=Names(
        names=r"""codes?\s+(?:de\s+(?:vérification|validation|secours|récupération|sécurité|connexion
            |authentification)|à\s+usage\s+unique|reçus?(?:\s+par\s+sms)?|sms|otp|2fa|par\s+sms)|clés?\s+de
            \s+récupération|otp|codes?\s+(?:que|qu['’])\s*(?:[\w'’]+\s+){0,3}?(?:reç|envoy)\w*|codes?\s+de
            \s+l['’]appli(?:cation)?|code\s+de\s+confirmation(?=\s*(?::|est|=|c['’]est)?\s*\d[\d\s-]{2,10}(?:[.,;!?]
            |\s|$))|re[çc]u\s+(?:le|un)\s+code""",
        openers=r"codes?\s+à\s+(?:\d|quatre|cinq|six|huit)\s+chiffres|codes?\s+par\s+sms|sms|texto",
        markers=r"codes?|otp",
    ),
    door_code=Names(
        names=r"""digicodes?|codes?\s+(?:de|du|d['’]|pour)\s*(?:l['’]|la\s+|le\s+)?(?:porte|portail|alarme|immeuble
            |entrée|garage|cadenas|coffre|interphone|résidence|bâtiment|boîte\s+à\s+clés|désarmer|désactiver|ouvrir)
            |combinaisons?|code\s+d['’]accès""",
        openers=r"""portes?|portail|alarmes?|cadenas|coffre(?:-fort)?|garage|interphone|digicode|immeuble|résidence
            |boîte\s+à\s+clés""",
        markers=r"""tap\w*|fai[st]|faire|compos\w*|entr(?:e|es|er|ez|ant)|saisi\w*|code
            |combinaison|(?:s['’])?ouvr\w*\s+avec|avec""",
    ),
    login=Names(
        names=r"identifiants?|login|nom\s+d['’]utilisateur|codes?\s+d['’]accès",
        openers=r"""banque\s+en\s+ligne|espace\s+client|identifiants?|(?:je\s+)?me\s+connecte|connexion|accès
            |mots?\s+de\s+passe|mdp|code\s+secret""",
        markers=r"identifiant|numéro(?:\s+(?:client|de\s+client|d['’]abonné|étudiant))?|utilisateur|login|code|mdp",
    ),
)
