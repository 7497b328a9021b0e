"""Italian: "la password è ...", "la parola d'ordine", "il PIN del bancomat", "le tre cifre sul retro", "nella
domanda segreta ho messo ...", "per disattivare l'allarme digita ..."."""

from core.safety.secret_lexicon import Grammar, Language, Names

GRAMMAR = Grammar(
    is_=r"è|e'|era|sarà|sono|erano|=|:|->|→|c['’]è(?:\s+scritto)?|ci\s+sono|è\s+scritto",
    to=r"(?:cambiat\w*|impostat\w*|mess\w*)\s+(?:in|a)|in|a|con",
    it_is=r"è|e'|era|sarà|sono",
    article=r"il|lo|la|l['’]|i|gli|le|un|una",
    of=r"di|del|della|dello|dell['’]|dei|degli|delle|per|al|alla|allo|dal|dalla|nel|nella|da",
    now=r"adesso|ora|ancora|attualmente|comunque|nuovo|nuova|per\s+favore|è\s+cambiat[ao]",
    as_=r"come",
    mine=r"(?:mio|mia|miei|mie|tuo|tua|suo|sua|nostro|nostra|il|la)",
    and_=r"e|ma|o|quindi|per\s+favore",
    not_values=r"""(?:il|lo|la|i|gli|le|un|una|mio|mia|tuo|tua|suo|sua|troppo|molto|debole|forte|lunga|corta|sicura
        |insicura|facile|difficile|complicata|sbagliata|errata|corretta|giusta|nuova|vecchia|stessa|uguale|diversa
        |obbligatoria|necessaria|segreta|privata|personale|scaduta|bloccata|cambiata|salvata|segnata|dimenticata
        |persa|attaccata|scritta|buona|cattiva|questa|quella|che|di|in|con|per|senza|non|sì|anche|ancora|già|così
        |come|quale|dove|quando|sempre|mai|niente|qualcosa|valida|temporanea|provvisoria|semplice|ovvia|casuale|qui
        |lì|là|dietro|sotto|sopra|dentro)""",
    units=r"caratteri|lettere|cifre|numeri|simboli|parole|giorni|mesi|anni|volte",
    digits=r"zero|uno|una|due|tre|quattro|cinque|sei|sette|otto|nove",
)

LANGUAGE = Language(
    code="it",
    grammar=GRAMMAR,
    password=Names(
        names=r"password|passw|parol[ae]\s+d['’]ordine|chiave\s+(?:del\s+)?(?:wi-?fi|wpa)|codice\s+(?:del\s+)?wi-?fi",
        openers=r"wi-?fi|router",
        phrases=r"fras[ei]\s+(?:segret[ae]|d['’]accesso|di\s+recupero|seme)|passphrase|parole\s+(?:di\s+recupero|segrete)",
    ),
    pin=Names(names=r"pin|codice\s+pin|codice\s+segreto|puk|codice\s+di\s+sblocco"),
    card_security_code=Names(
        names=r"""cvv2?|cvc2?|codice\s+(?:di\s+sicurezza|cvv)|(?:(?:le\s+)?(?:tre|quattro|3|4)\s+)?(?:cifre|numeri)
            \s+(?:sul\s+retro|dietro|sul\s+dorso)|(?:retro|dietro)\s+(?:al)?(?:del)?la\s+(?:mia\s+)?carta""",
        openers=r"carta(?:\s+di\s+credito)?|carte|bancomat|visa|mastercard|amex|postepay",
        markers=r"""codice(?:\s+(?:dietro|sul\s+retro|di\s+sicurezza))?|cvv|cvc|(?:cifre|numeri)(?:\s+dietro
            |\s+sul\s+retro)?""",
    ),
    security_answer=Names(
        phrases=r"""domand[ae]\s+(?:di\s+sicurezza|segret[ae])|rispost[ae]\s+(?:di\s+sicurezza|segret[ae])
            |cognome\s+da\s+nubile\s+di\s+(?:mia|tua|sua)\s+madre""",
        openers=r"""domand[ae]\s+(?:di\s+sicurezza|segret[ae])|cognome\s+da\s+nubile|(?:se|quando)\s+la\s+banca
            \s+(?:mi\s+)?(?:chiede|domanda)|(?:per|alla|nella)\s+(?:domanda\s+)?['"‘“«][^'"’”»]{3,60}['"’”»]""",
        markers=r"rispost[ae]|(?:ho\s+)?(?:messo|risposto|scritto|scelto|usato|inserito)",
    ),
    one_time_code=Names(
        names=r"""codic[ei]\s+(?:di\s+(?:verifica|recupero|backup|sicurezza|accesso|autenticazione|autorizzazione)
            |otp|sms|via\s+sms|arrivato(?:\s+via\s+sms)?|monouso)|otp|chiav[ei]\s+di\s+recupero|token
            |codic[ei]\s+che\s+(?:[\w'’]+\s+){0,3}?(?:arriv|mand|invi|ricev)\w*(?:\s+[\w'’]+){0,3}?
            |codice\s+dell['’]app|(?:arrivat[ao]|ricevut[ao])\s+(?:il|un)\s+codice|codice\s+di\s+conferma(?=\s*(?::|è|=)?\s*\d[\d\s-]{2,10}(?:[.,;!?]|\s|$))""",
        openers=r"codic[ei]\s+(?:di|da)\s+(?:\d|quattro|cinque|sei|otto)\s+cifre|codice\s+via\s+sms|sms",
        markers=r"codic[ei]|otp",
    ),
    door_code=Names(
        names=r"""codic[ei]\s+(?:del|della|dello|dell['’]|per|di)\s*(?:la\s+|il\s+|l['’])?(?:portone|porta|cancello
            |allarme|garage|box|ingresso|lucchetto|cassaforte|citofono|condominio|palazzo|casa|disinserire
            |disattivare|aprire)|combinazion[ei]|codice\s+d['’]accesso""",
        openers=r"porton[ei]|port[ae]|cancello|allarme|lucchetto|cassaforte|garage|box|citofono|condominio|palazzo",
        markers=r"""digit\w*|compon\w*|comporre|inserisc\w*|inserire|fai|prem\w*|codice|combinazione
            |(?:si\s+)?apr\w*\s+con|con""",
    ),
    login=Names(
        names=r"nome\s+utente|username|credenziali|codice\s+(?:utente|cliente)|login|dati\s+di\s+accesso",
        openers=r"""home\s*banking|internet\s+banking|area\s+clienti|credenziali|dati\s+di\s+accesso|(?:entro|accedo
            |mi\s+collego)\s+(?:su|nel|nell['’]|al|a|in)|login|accesso|password|pin""",
        markers=r"nome\s+utente|utente|username|codice\s+(?:cliente|utente)|matricola|login|password|pin",
    ),
)
