"""German: "das WLAN-Passwort lautet ...", "meine Geheimzahl ist ...", "die Kartenprüfnummer", "bei der
Sicherheitsfrage hab ich ... angegeben", "die TAN", "um die Alarmanlage auszuschalten, gibst du ... ein".

German joins nouns into one word: the names that join safely are written with a leading `\\w*` ("Mailpasswort",
"Handy-PIN", "Haustürcode"); others are listed whole."""

from core.safety.secret_lexicon import Grammar, Language, Names

GRAMMAR = Grammar(
    is_=r"ist|lautet|lauten|war|wäre|sind|heißt|=|:|->|→|steht|stehen",
    to=r"(?:geändert|gesetzt)\s+(?:auf|in|zu)|auf|in|zu",
    it_is=r"(?:der|die|das|er|sie|es)\s+(?:ist|lautet)|ist|lautet",
    article=r"der|die|das|den|dem|ein|eine",
    of=r"für|fürs|vom|von|zum|zur|bei|beim|der|des|meiner|meines|im|am|an",
    now=r"jetzt|nun|noch|aktuell|übrigens|weiterhin|momentan|bitte|neu|hat\s+sich\s+geändert|wurde\s+geändert",
    as_=r"als",
    mine=r"(?:mein|meine|meinen|dein|deine|sein|seine|ihr|ihre|unser|unsere|das|die|der)",
    and_=r"und|aber|oder|also|bitte",
    not_values=r"""(?:der|die|das|ein|eine|mein|meine|dein|sein|zu|sehr|schwach|stark|lang|kurz|sicher|unsicher
        |einfach|leicht|schwer|kompliziert|falsch|richtig|korrekt|neu|alt|gleich|dasselbe|derselbe|dieselbe|anders
        |verschieden|pflicht|nötig|notwendig|geheim|privat|persönlich|abgelaufen|gesperrt|geändert|gespeichert
        |notiert|vergessen|verloren|aufgeschrieben|gut|schlecht|dies|dieses|was|wie|wo|wann|immer|nie|nichts|etwas
        |gültig|ungültig|vorübergehend|temporär|offensichtlich|zufällig|nicht|auch|noch|schon|so|in|im|auf|unter
        |mit|bei|für|hinten|vorne|unten|oben|drauf|dort|da|drin|hier|am)""",
    units=r"zeichen|buchstaben|ziffern|stellen|stellig|zahlen|symbole|wörter|tage|monate|jahre|mal",
    digits=r"null|eins|ein|zwei|zwo|drei|vier|fünf|sechs|sieben|acht|neun",
)

LANGUAGE = Language(
    code="de",
    grammar=GRAMMAR,
    password=Names(
        names=r"\w*passw(?:o|ö)rt(?:er)?|\w*kennw(?:o|ö)rt(?:er)?|password|pw|(?:wlan|wpa|netzwerk)-?schlüssel",
        phrases=r"passphrasen?|merksatz|wiederherstellungs(?:phrase|wörter)|seed-?(?:phrase|wörter)",
        openers=r"wlan|router|hotspot",
    ),
    pin=Names(
        names=r"(?:\w+-)?pin(?:-?code|-?nummer)?|geheimzahl|geheimnummer|puk|entsperr(?:code|-?pin)|bildschirmsperre"
    ),
    card_security_code=Names(
        names=r"""kartenprüfnummern?|prüfnummern?|prüfziffern?|sicherheitscode|cvv2?|cvc2?|(?:(?:die\s+)?(?:drei|vier|3|4)
            \s+)?(?:ziffern|zahlen|nummern)\s+(?:auf\s+der\s+rückseite|hinten(?:\s+drauf)?)|(?:hinten\s+auf
            |rückseite)\s+(?:der|meiner|deiner)\s+karte""",
        openers=r"\w*karten?|visa|mastercard|amex",
        markers=r"""code(?:\s+(?:hinten(?:\s+drauf)?|auf\s+der\s+rückseite))?|prüfnummer|cvv|cvc|(?:ziffern|zahlen)
            (?:\s+hinten|\s+auf\s+der\s+rückseite)?""",
    ),
    security_answer=Names(
        phrases=r"""sicherheitsfragen?|sicherheitsantwort(?:en)?|geheimfragen?|geheime\s+(?:frage|antwort)
            |mädchenname\s+(?:meiner|deiner|seiner|ihrer)\s+mutter|geburtsname\s+(?:meiner|deiner)\s+mutter""",
        openers=r"""sicherheitsfragen?|geheimfragen?|geheime\s+frage|mädchenname|(?:wenn|falls)\s+die\s+bank
            \s+(?:danach\s+)?fragt|(?:bei|für)\s+(?:der\s+frage\s+)?['"‘“«„][^'"’”»“]{3,60}['"’”»“]""",
        # The participle ends the clause: "habe ich Bello eingegeben".
        markers=r"""antwort(?:en)?|angegeben|eingetragen|eingegeben|geantwortet|geschrieben|gewählt|genommen
            |(?:habe|hab)\s+ich|ich\s+(?:habe|hab)""",
    ),
    one_time_code=Names(
        names=r"""\w*(?:bestätigungs|verifizierungs|sicherheits|wiederherstellungs|einmal|backup|anmelde|login|sms
            |authentifizierungs|freigabe)codes?|(?:code|pin)\s+(?:aus|von)\s+(?:der|dem)\s+[\w-]*(?:sms|app)
            |code,?\s+den\s+(?:mir|ich)\s+[^.,;:]{0,40}?(?:geschickt|gesendet|bekommen|erhalten)(?:\s+hat|\s+habe)?
            |(?:den|einen)\s+code(?=\s+\d[\d\s-]{2,12}\s[^.]{0,40}?(?:bekommen|erhalten|gekriegt))
            |(?-i:TAN|mTAN|pushTAN|chipTAN|smsTAN)
            (?:-nummer)?|otp|einmalpasswort""",
        openers=r"(?:\d|vier|fünf|sechs|acht)-?stellig\w*\s+code|code\s+per\s+sms|sms",
        markers=r"codes?|otp",
    ),
    door_code=Names(
        names=r"""\w*(?:tür|tor|alarm|schloss|tresor|safe|zugangs|eingangs|schlüsselkasten|schlüsselsafe)codes?
            |codes?\s+(?:für|fürs|zum|zur|von|vom|der|des)\s+(?:die\s+|das\s+|den\s+)?(?:\w+\s+)?(?:tür|haustür|tor
            |garagentor|alarmanlage|alarm|schloss|tresor|safe|eingang|garage|schlüsselkasten|briefkasten|entschärfen
            |ausschalten|öffnen|deaktivieren)|kombination(?:en)?|zahlenkombination|zahlencode""",
        openers=r"""türe?n?|haustür|wohnungstür|eingangstür|kellertür|tor|garagentor|hoftor|gartentor
            |einfahrtstor|alarm\w*|\w*schloss|\w*tresor|\w*safe|garage|gegensprechanlage|schlüsselkasten""",
        markers=r"""(?:gib|gibst|tipp\w*|drück\w*|wähl\w*)(?:\s+du)?|eingeben
            |geht\s+(?:mit|auf\s+mit)|öffnet\s+(?:sich\s+)?mit|code|kombination|mit""",
    ),
    login=Names(
        names=r"""benutzername|anmeldename|nutzername|benutzerkennung|kennung|zugangsdaten|anmeldedaten
            |login(?:-?name|daten)?""",
        openers=r"""zugangsdaten|anmeldedaten|online-?banking|kundenportal|melde\s+mich|logge\s+mich|eingeloggt
            |login|anmeldung|\w*passw(?:o|ö)rt\w*|\w*kennwort|pin""",
        markers=r"(?:be)?nutzer(?:name)?|anmeldename|kennung|login|\w*nummer|passwort|kennwort|pin",
    ),
)
