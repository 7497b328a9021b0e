"""Spanish: "mi contraseña del banco es ...", "los tres dígitos de atrás son ...", "en la pregunta secreta puse ...",
"para desactivar la alarma hay que marcar ..."."""

from core.safety.secret_lexicon import Grammar, Language, Names

GRAMMAR = Grammar(
    is_=r"es|era|será|sería|son|eran|serán|fue|queda|quedó|=|:|->|→|pone|dice",
    to=r"(?:cambi\w*|puse|pusimos|actualic[eé])\s+(?:a|por)|a|por",
    it_is=r"es|era|será|son",
    article=r"el|la|los|las|lo|un|una",
    of=r"de|del|para|en|al|a",
    now=r"ahora|todavía|aún|ya|actualmente|nuevo|nueva|por\s+favor|oye|ha\s+cambiado|cambió",
    as_=r"como",
    mine=r"(?:mi|mis|tu|su|nuestra|nuestro|la|el)",
    and_=r"y|e|pero|o|así\s+que|por\s+favor",
    not_values=r"""(?:el|la|los|las|lo|un|una|mi|tu|su|muy|demasiado|débil|fuerte|larga|corta|segura|insegura|fácil
        |difícil|complicada|incorrecta|correcta|errónea|equivocada|nueva|vieja|antigua|misma|igual|distinta|diferente
        |obligatoria|necesaria|secreta|privada|personal|caducada|expirada|bloqueada|cambiada|guardada|apuntada
        |olvidada|perdida|buena|mala|esa|ese|esta|este|eso|esto|que|de|en|con|para|por|sin|no|sí|si|también|todavía
        |ya|tan|como|cuál|qué|cómo|dónde|cuando|siempre|nunca|nada|algo|alguna|ninguna|válida|inválida|activa
        |temporal|provisional|sencilla|simple|obvia|predecible|aleatoria|pegada|escrita|aquí|allí|ahí|abajo|arriba
        |detrás|atrás|dentro)""",
    units=r"caracteres|letras|dígitos|números|cifras|símbolos|palabras|días|meses|años|veces",
    digits=r"cero|uno|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve",
)

LANGUAGE = Language(
    code="es",
    grammar=GRAMMAR,
    password=Names(
        names=r"contraseñas?|contrasenas?|claves?(?:\s+de\s+acceso|\s+secreta)?|password|palabra\s+clave",
        openers=r"wi-?fi|router",
        phrases=r"""frases?\s+(?:de\s+)?(?:contraseña|clave|secreta|semilla|de\s+recuperación)|palabras\s+(?:de\s+recuperación
            |semilla|secretas)""",
    ),
    pin=Names(
        names=r"""pin|código\s+pin|número\s+(?:pin|secreto)|clave\s+del\s+cajero|puk|código\s+de\s+desbloqueo
            |pin\s+del\s+(?:móvil|teléfono|celular)"""
    ),
    card_security_code=Names(
        names=r"""cvv2?|cvc2?|código\s+(?:de\s+seguridad|cvv)|(?:(?:los\s+)?(?:tres|cuatro|3|4)\s+)?(?:dígitos
            |números|cifras)\s+(?:de\s+atrás|de\s+detrás|del\s+reverso|del\s+dorso|de\s+la\s+parte\s+de\s+atrás)
            |(?:lo|el\s+número|el\s+código)\s+de\s+(?:atrás|detrás)|(?:atrás|detrás|reverso|dorso)\s+de\s+(?:la|mi)
            \s+tarjeta""",
        openers=r"tarjetas?|visa|mastercard|amex",
        markers=r"""código(?:\s+de\s+(?:atrás|seguridad)|\s+del\s+reverso)?|cvv|cvc|(?:dígitos|números|cifras)
            (?:\s+de\s+atrás|\s+del\s+reverso)?|(?:los\s+)?(?:tres|cuatro)\s+de\s+atrás""",
    ),
    security_answer=Names(
        phrases=r"""preguntas?\s+(?:de\s+seguridad|secretas?)|respuestas?\s+(?:de\s+seguridad|secretas?)
            |apellido\s+de\s+soltera\s+de\s+(?:mi|tu|su)\s+madre|palabra\s+memorable""",
        openers=r"""preguntas?\s+(?:de\s+seguridad|secretas?)|apellido\s+de\s+soltera|(?:si|cuando)\s+(?:el\s+banco|me)
            \s+preguntan?(?:\s+por)?|(?:en|para)\s+(?:la\s+pregunta\s+)?['"‘“«][^'"’”»]{3,60}['"’”»]""",
        markers=r"respuestas?|puse|pusimos|respondí|contesté|escribí|elegí|usé|metí|he\s+puesto",
    ),
    one_time_code=Names(
        names=r"""códigos?\s+(?:de\s+(?:verificación|recuperación|respaldo|seguridad|autenticación|acceso\s+único
            |un\s+solo\s+uso|inicio\s+de\s+sesión)|otp|por\s+sms|del\s+sms|sms|2fa)|claves?\s+de\s+(?:recuperación
            |un\s+solo\s+uso)|clave\s+(?:otp|dinámica)|otp|token|códigos?\s+que\s+(?:[\w'’]+\s+){0,3}?(?:lleg|envi
            |mand|recib)\w*(?:\s+[\w'’]+){0,3}?|códigos?\s+(?:de|del)\s+(?:la\s+)?app|código\s+de\s+confirmación
            (?=\s*(?::|es|=)?\s*(?:el\s+)?\d[\d\s-]{2,10}(?:[.,;!?]|\s|$))|(?:lleg\w*|recib\w*)\s+(?:el|un)\s+código""",
        openers=r"""códigos?\s+de\s+(?:\d|cuatro|cinco|seis|ocho)\s+(?:cifras|dígitos|números)|códigos?\s+por\s+sms
            |sms""",
        markers=r"códigos?|clave|otp",
    ),
    door_code=Names(
        names=r"""códigos?\s+(?:de|del|para)\s+(?:la\s+|el\s+)?(?:puerta|portal|portón|alarma|garaje|cochera
            |entrada|candado|caja\s+fuerte|cerradura|edificio|casa|piso|trastero|buzón|urbanización|desarmar
            |desactivar|quitar|abrir)|combinaci[oó]n(?:es)?|clave\s+de\s+la\s+alarma|código\s+de\s+acceso""",
        openers=r"""puertas?|portal|portón|alarmas?|candado|caja\s+fuerte|cerradura|garaje|cochera|portero
            |telefonillo|urbanización|caja\s+de\s+llaves""",
        markers=r"""marc[aáo]\w*|teclea\w*|pon(?:er|es)?|introduc\w*|mete[rs]?|digit\w*|código|combinación
            |(?:se\s+)?abr\w*\s+con|con""",
    ),
    login=Names(
        names=r"usuario|nombre\s+de\s+usuario|credenciales|datos\s+de\s+acceso|login",
        openers=r"""banca\s+(?:online|en\s+línea|electrónica|móvil|por\s+internet)|credenciales|datos\s+de\s+acceso
            |(?:iniciar|inicio\s+de)\s+sesión|(?:entr[aoe]r?|acced[aeo]r?|me\s+conecto)\s+(?:en|a|al)
            |contraseñas?|claves?|pin|web\s+del\s+banco|app\s+del\s+banco""",
        markers=r"usuario|nombre\s+de\s+usuario|número\s+de\s+cliente|matrícula|clave|contraseña|código",
    ),
)
